"""Writes a small GPT over bytes with torch.jit.script, as a Tandem user would script their own:
make_gpt.py OUT.pt [--frozen] [--loss-method] [--wide] [--lora] [--digests] [+ OUT.pt [...] ...]

--frozen freezes the embeddings and the first block (requires_grad=False), as a fine-tune of a
pretrained network does; --loss-method gives the model its own loss(output, target); --wide
gives it the built-in gpt's shape (4 blocks of 256, 4 heads, context 256) for benchmarks;
--lora freezes every weight and adds low-rank adapters (rank 4) beside each block's attention
and output projections, as LoRA does: only the adapters train; --digests then prints the
SHA-256 of each parameter's bytes (float32, little-endian, row-major) as the written file holds
them, "NAME DIGEST" a line after a "# OUT.pt" line. Several models, each after a "+", are
written by one process (one import of torch); --wide applies to all of them."""
import hashlib
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

VOCAB, CONTEXT, DIM, HEADS, LAYERS = 256, 32, 48, 2, 2
if "--wide" in sys.argv:
    CONTEXT, DIM, HEADS, LAYERS = 256, 256, 4, 4


class LoraLinear(nn.Module):
    """A frozen linear layer plus a trainable low-rank update: y = W x + b + (B A x) * alpha / r,
    with B zero at first so that the model starts as the base."""

    def __init__(self, base: nn.Linear, rank: int = 4, alpha: float = 8.0):
        super().__init__()
        self.base = base
        self.lora_A = nn.Parameter(torch.randn(rank, base.in_features) * 0.01)
        self.lora_B = nn.Parameter(torch.zeros(base.out_features, rank))
        self.scale = alpha / rank

    def forward(self, x):
        return self.base(x) + F.linear(F.linear(x, self.lora_A), self.lora_B) * self.scale


class Block(nn.Module):
    heads: int

    def __init__(self):
        super().__init__()
        self.heads = HEADS
        self.ln1 = nn.LayerNorm(DIM)
        self.attn = nn.Linear(DIM, 3 * DIM)
        self.proj = nn.Linear(DIM, DIM)
        self.ln2 = nn.LayerNorm(DIM)
        self.fc = nn.Linear(DIM, 4 * DIM)
        self.out = nn.Linear(4 * DIM, DIM)

    def forward(self, x):
        B, T, C = x.shape
        H = self.heads
        q, k, v = self.attn(self.ln1(x)).split(C, 2)
        q = q.reshape(B, T, H, C // H).transpose(1, 2)
        k = k.reshape(B, T, H, C // H).transpose(1, 2)
        v = v.reshape(B, T, H, C // H).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / (C // H) ** 0.5)
        mask = torch.triu(torch.ones(T, T, device=x.device), 1) > 0.5
        att = torch.softmax(att.masked_fill(mask, float("-inf")), -1)
        y = (att @ v).transpose(1, 2).reshape(B, T, C)
        x = x + self.proj(y)
        return x + self.out(F.gelu(self.fc(self.ln2(x))))


class Gpt(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(VOCAB, DIM)
        self.pos = nn.Embedding(CONTEXT, DIM)
        self.blocks = nn.Sequential(*[Block() for _ in range(LAYERS)])
        self.ln_f = nn.LayerNorm(DIM)
        self.head = nn.Linear(DIM, VOCAB)

    def forward(self, x):
        T = x.shape[1]
        h = self.tok(x) + self.pos(torch.arange(T, device=x.device))
        return self.head(self.ln_f(self.blocks(h)))


class GptWithLoss(Gpt):
    @torch.jit.export
    def loss(self, output: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        return F.cross_entropy(output.reshape(-1, output.size(-1)), target.reshape(-1))




def write(out, flags):
    torch.manual_seed(0)
    model = GptWithLoss() if "--loss-method" in flags else Gpt()
    for name, p in model.named_parameters():
        if p.dim() >= 2:
            nn.init.normal_(p, 0.0, 0.05)
    if "--lora" in flags:
        for p in model.parameters():
            p.requires_grad_(False)
        for b in model.blocks:
            b.attn = LoraLinear(b.attn)
            b.out = LoraLinear(b.out)
    if "--frozen" in flags:
        for m in (model.tok, model.pos, model.blocks[0]):
            for p in m.parameters():
                p.requires_grad_(False)
    torch.jit.script(model).save(out)
    if "--digests" in flags:
        print("#", out)
        for name, p in torch.jit.load(out).named_parameters():
            data = p.detach().contiguous().to(torch.float32).numpy().tobytes()
            print(name, hashlib.sha256(data).hexdigest())


job = []
for arg in sys.argv[1:] + ["+"]:
    if arg != "+":
        job.append(arg)
    elif job:
        write(job[0], job[1:])
        job = []
