"""NF4 and int8 quantization written from the published algorithms with PyTorch's own
operators, with no code of Tandem's: the reference Tandem's quantized bases are checked against.

NF4 (Dettmers et al. 2023, "QLoRA", and bitsandbytes' quantize_4bit): the weight flattened, in
blocks of 64; each block's absmax; each value times 1/absmax (fp32), clamped to [-1, 1], replaced
by the index of the nearest of the 16 NormalFloat values (argmin: the first on a tie); two
indices a byte, the first in the high four bits, an odd count padded with 0.0. Double
quantization: the absmax values less their mean, in blocks of 256, quantized the same way to
bitsandbytes' signed dynamic map. int8 (LLM.int8 without outliers): each row times 127/absmax,
rounded.

    quant_reference.py quantize IN OUT     every 2-D tensor NAME of IN to OUT as NAME.packed,
                                           NAME.absmax, NAME.dequant (single quantization),
                                           NAME.dq.absmax, NAME.dq.nested_absmax, NAME.dq.offset,
                                           NAME.dq.dequant (double), NAME.int8, NAME.scb,
                                           NAME.int8.dequant; and nf4_code, dynamic_code
    quant_reference.py bnb SRC OUT DEQ     the folder SRC with every block linear weight in
                                           bitsandbytes' nf4 layout (double quantization) as
                                           OUT, and dequantized again, in SRC's dtype, as DEQ
"""
import json
import os
import shutil
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_hf  # noqa: E402

make_hf.DTYPES[torch.uint8] = "U8"
make_hf.DTYPES[torch.int8] = "I8"

NF4 = torch.tensor([-1.0, -0.6961928009986877, -0.5250730514526367, -0.39491748809814453,
                    -0.28444138169288635, -0.18477343022823334, -0.09105003625154495, 0.0,
                    0.07958029955625534, 0.16093020141124725, 0.24611230194568634,
                    0.33791524171829224, 0.44070982933044434, 0.5626170039176941,
                    0.7229568362236023, 1.0], dtype=torch.float32)

LINEAR = ("q_proj", "k_proj", "v_proj", "o_proj", "qkv_proj", "gate_proj", "up_proj",
          "gate_up_proj", "down_proj")


def dynamic_map():
    """bitsandbytes' create_dynamic_map(signed=True, max_exponent_bits=7, total_bits=8)."""
    data = []
    for i in range(7):
        b = torch.linspace(0.1, 1, 2 ** i + 1, dtype=torch.float32)
        means = (b[:-1] + b[1:]) / 2.0
        data += ((10 ** (-6 + i)) * means).tolist()
        data += (-(10 ** (-6 + i)) * means).tolist()
    data += [0, 1.0]
    data.sort()
    return torch.tensor(data, dtype=torch.float32)


def blockwise(values, blocksize, code):
    """Indices into `code` and the blocks' absmax, fp32."""
    n = values.numel()
    blocks = (n + blocksize - 1) // blocksize
    flat = torch.cat([values.reshape(-1).float(), torch.zeros(blocks * blocksize - n)])
    rows = flat.view(blocks, blocksize)
    absmax = rows.abs().max(dim=1).values
    scaled = torch.clamp(rows * (1 / absmax.view(-1, 1)), -1, 1).reshape(-1)[:n]
    idx = torch.argmin(torch.abs(scaled.view(-1, 1) - code), dim=-1)
    return idx.to(torch.uint8), absmax


def nf4(w, double):
    idx, absmax = blockwise(w, 64, NF4)
    if idx.numel() % 2:
        idx = torch.cat([idx, torch.tensor([7], dtype=torch.uint8)])
    packed = (idx[::2] << 4 | idx[1::2]).view(-1, 1)
    out = {"packed": packed, "absmax": absmax}
    if double:
        offset = absmax.mean()
        qabs, nested = blockwise(absmax - offset, 256, dynamic_map())
        out.update({"absmax": qabs, "nested_absmax": nested, "offset": offset.view(1)})
    return out


def nf4_dequant(q, shape, n):
    absmax = q["absmax"]
    if "nested_absmax" in q:
        code = dynamic_map()
        values = code[absmax.long()]
        blocks = absmax.numel()
        padded = torch.cat([values, torch.zeros(q["nested_absmax"].numel() * 256 - blocks)])
        absmax = (padded.view(-1, 256) * q["nested_absmax"].view(-1, 1)).reshape(-1)[:blocks]
        absmax = absmax + q["offset"]
    p = q["packed"].reshape(-1)
    idx = torch.stack([p >> 4, p & 15], dim=1).reshape(-1)
    values = NF4[idx.long()]
    blocks = absmax.numel()
    values = torch.cat([values, torch.zeros(blocks * 64 - values.numel())])[:blocks * 64]
    return (values.view(blocks, 64) * absmax.view(-1, 1)).reshape(-1)[:n].view(shape)


def int8(w):
    x = w.float()
    scb = x.abs().max(dim=1).values
    q = torch.round(x * (127.0 / scb.view(-1, 1)))
    q = torch.where(scb.view(-1, 1) > 0, q, torch.zeros_like(q)).to(torch.int8)
    return q, scb


def quantize(src, out):
    result = {"nf4_code": NF4, "dynamic_code": dynamic_map()}
    for name, w in make_hf.read_safetensors(src).items():
        if w.dim() != 2:
            continue
        single, double = nf4(w, False), nf4(w, True)
        result[name + ".packed"] = single["packed"]
        result[name + ".absmax"] = single["absmax"]
        result[name + ".dequant"] = nf4_dequant(single, w.shape, w.numel())
        assert torch.equal(double["packed"], single["packed"])
        for part in ("absmax", "nested_absmax", "offset"):
            result[name + ".dq." + part] = double[part]
        result[name + ".dq.dequant"] = nf4_dequant(double, w.shape, w.numel())
        q, scb = int8(w)
        result[name + ".int8"] = q
        result[name + ".scb"] = scb
        result[name + ".int8.dequant"] = q.float() * scb.view(-1, 1) * 7.874015718698502e-3
    make_hf.write_safetensors(out, result)


def bnb(src, out, deq):
    with open(os.path.join(src, "config.json")) as f:
        config = json.load(f)
    weights = make_hf.read_safetensors(os.path.join(src, "model.safetensors"))
    packed, dequantized = {}, {}
    for name, w in weights.items():
        module = name[:-len(".weight")] if name.endswith(".weight") else ""
        if ".layers." not in name or module.split(".")[-1] not in LINEAR:
            packed[name] = dequantized[name] = w
            continue
        q = nf4(w, True)
        state = {"quant_type": "nf4", "blocksize": 64, "dtype": str(w.dtype)[len("torch."):],
                 "shape": list(w.shape), "nested_blocksize": 256, "nested_dtype": "float32",
                 "nested_offset": q["offset"].item()}
        packed[name] = q["packed"]
        packed[name + ".absmax"] = q["absmax"]
        packed[name + ".quant_map"] = NF4.clone()
        packed[name + ".nested_absmax"] = q["nested_absmax"]
        packed[name + ".nested_quant_map"] = dynamic_map()
        packed[name + ".quant_state.bitsandbytes__nf4"] = torch.tensor(
            list(json.dumps(state).encode()), dtype=torch.uint8)
        dequantized[name] = nf4_dequant(q, w.shape, w.numel()).to(w.dtype)
    for folder, tensors in ((out, packed), (deq, dequantized)):
        os.makedirs(folder, exist_ok=True)
        c = dict(config)
        if folder == out:
            c["quantization_config"] = {
                "quant_method": "bitsandbytes", "load_in_4bit": True, "load_in_8bit": False,
                "bnb_4bit_quant_type": "nf4", "bnb_4bit_use_double_quant": True,
                "bnb_4bit_compute_dtype": "bfloat16", "bnb_4bit_quant_storage": "uint8",
                "llm_int8_skip_modules": None}
        with open(os.path.join(folder, "config.json"), "w") as f:
            json.dump(c, f, indent=2)
        make_hf.write_safetensors(os.path.join(folder, "model.safetensors"), tensors)
        for extra in ("tokenizer.json",):
            if os.path.exists(os.path.join(src, extra)):
                shutil.copy(os.path.join(src, extra), folder)


def main():
    if sys.argv[1] == "quantize":
        quantize(sys.argv[2], sys.argv[3])
    elif sys.argv[1] == "bnb":
        bnb(sys.argv[2], sys.argv[3], sys.argv[4])
    else:
        sys.exit("usage: quant_reference.py quantize IN OUT | bnb SRC OUT DEQ")


if __name__ == "__main__":
    main()
