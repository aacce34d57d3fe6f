#include "model/scriptmodel.h"
#include "model/torchcompat.h"
#include "model/zoobuilder.h"

namespace tandem {

namespace {

using torch::jit::Module;

// The multilayer perceptron: 784-256-10 on flattened 28x28 images.
Module buildMlp(uint64_t seed) {
    ZooBuilder b("mlp", seed);
    Module m = b.module("Mlp");
    m.register_module("fc1", b.linear(784, 256));
    m.register_module("fc2", b.linear(256, 10));
    m.define(R"(
def forward(self, x: Tensor) -> Tensor:
    x = torch.flatten(x, 1)
    x = torch.relu(self.fc1.forward(x))
    return self.fc2.forward(x)
)");
    return m;
}

// The pytorch/examples MNIST network without dropout, with the same parameter names.
Module buildMnistCnn(uint64_t seed) {
    ZooBuilder b("mnist_cnn", seed);
    Module m = b.module("Net");
    m.register_module("conv1", b.conv2d(1, 32, 3, 1, 0, true));
    m.register_module("conv2", b.conv2d(32, 64, 3, 1, 0, true));
    m.register_module("fc1", b.linear(9216, 128));
    m.register_module("fc2", b.linear(128, 10));
    m.define(R"(
def forward(self, x: Tensor) -> Tensor:
    x = torch.relu(self.conv1.forward(x))
    x = torch.relu(self.conv2.forward(x))
    x = torch.max_pool2d(x, [2, 2], [2, 2], [0, 0], [1, 1], False)
    x = torch.flatten(x, 1)
    x = torch.relu(self.fc1.forward(x))
    return self.fc2.forward(x)
)");
    return m;
}

// A basic residual block: two 3x3 conv+BN, with a 1x1 conv+BN shortcut when the shape changes.
Module resBlock(ZooBuilder& b, int64_t in, int64_t out, int64_t stride) {
    Module m = b.module("BasicBlock");
    m.register_module("conv1", b.conv2d(in, out, 3, stride, 1, false));
    m.register_module("bn1", b.batchNorm2d(out));
    m.register_module("conv2", b.conv2d(out, out, 3, 1, 1, false));
    m.register_module("bn2", b.batchNorm2d(out));
    const bool project = stride != 1 || in != out;
    if (project) {
        m.register_module("shortcut_conv", b.conv2d(in, out, 1, stride, 0, false));
        m.register_module("shortcut_bn", b.batchNorm2d(out));
    }
    const std::string shortcut =
        project ? "self.shortcut_bn.forward(self.shortcut_conv.forward(x))" : "x";
    m.define("def forward(self, x: Tensor) -> Tensor:\n"
             "    y = torch.relu(self.bn1.forward(self.conv1.forward(x)))\n"
             "    y = self.bn2.forward(self.conv2.forward(y))\n"
             "    return torch.relu(y + " +
             shortcut + ")\n");
    return m;
}

// ResNet-8 for 32x32x3 images (CIFAR-10): a 16-channel stem and three residual stages of one
// block each (16, 32, 64 channels), global average pooling and a linear classifier.
Module buildResnet8(uint64_t seed) {
    ZooBuilder b("resnet8", seed);
    Module m = b.module("ResNet8");
    m.register_module("conv1", b.conv2d(3, 16, 3, 1, 1, false));
    m.register_module("bn1", b.batchNorm2d(16));
    m.register_module("layer1", resBlock(b, 16, 16, 1));
    m.register_module("layer2", resBlock(b, 16, 32, 2));
    m.register_module("layer3", resBlock(b, 32, 64, 2));
    m.register_module("fc", b.linear(64, 10));
    m.define(R"(
def forward(self, x: Tensor) -> Tensor:
    x = torch.relu(self.bn1.forward(self.conv1.forward(x)))
    x = self.layer1.forward(x)
    x = self.layer2.forward(x)
    x = self.layer3.forward(x)
    x = torch.mean(x, [2, 3])
    return self.fc.forward(x)
)");
    return m;
}

// The built-in language model: a small GPT over bytes. Its torch.nn definition (the user
// guide has it whole) is
//   tok = Embedding(256, 256); pos = Embedding(256, 256)
//   blocks = Sequential(4 × Block): ln1 = LayerNorm(256), attn = Linear(256, 768),
//       proj = Linear(256, 256), ln2 = LayerNorm(256), fc = Linear(256, 1024),
//       out = Linear(1024, 256); x += proj(causal 4-head attention of ln1(x));
//       x += out(gelu(fc(ln2(x))))
//   ln_f = LayerNorm(256); logits = ln_f(x) @ tok.weight.T (tied, as GPT-2's)
// initialised as GPT-2 is: N(0, 0.02²), the residual projections scaled by 1/sqrt(2 × layers),
// biases 0. Input: token ids [B, T] with T ≤ 256; output: logits [B, T, 256].
constexpr int64_t kGptVocab = 256, kGptContext = 256, kGptDim = 256, kGptLayers = 4, kGptHeads = 4;

Module gptBlock(ZooBuilder& b) {
    const double residualStd = 0.02 / std::sqrt(2.0 * double(kGptLayers));
    Module m = b.module("Block");
    m.register_module("ln1", b.layerNorm(kGptDim));
    m.register_module("attn", b.linearNormal(kGptDim, 3 * kGptDim, 0.02));
    m.register_module("proj", b.linearNormal(kGptDim, kGptDim, residualStd));
    m.register_module("ln2", b.layerNorm(kGptDim));
    m.register_module("fc", b.linearNormal(kGptDim, 4 * kGptDim, 0.02));
    m.register_module("out", b.linearNormal(4 * kGptDim, kGptDim, residualStd));
    const std::string heads = std::to_string(kGptHeads);
    // 1/sqrt(head dimension), written out: TorchScript defined from C++ has no math module.
    const std::string scale = std::to_string(1.0 / std::sqrt(double(kGptDim / kGptHeads)));
    m.define(R"(
def forward(self, x: Tensor) -> Tensor:
    B = x.size(0)
    T = x.size(1)
    C = x.size(2)
    H = )" + heads +
             R"(
    qkv = self.attn.forward(self.ln1.forward(x))
    parts = qkv.split(C, 2)
    q = parts[0].reshape([B, T, H, C // H]).transpose(1, 2)
    k = parts[1].reshape([B, T, H, C // H]).transpose(1, 2)
    v = parts[2].reshape([B, T, H, C // H]).transpose(1, 2)
    att = torch.matmul(q, k.transpose(-2, -1)) * )" +
             scale + R"(
    mask = torch.triu(torch.ones([T, T], device=x.device), 1) > 0.5
    att = torch.softmax(att.masked_fill(mask, float("-inf")), -1)
    y = torch.matmul(att, v).transpose(1, 2).reshape([B, T, C])
    x = x + self.proj.forward(y)
    return x + self.out.forward(torch.gelu(self.fc.forward(self.ln2.forward(x))))
)");
    return m;
}

Module buildGpt(uint64_t seed) {
    ZooBuilder b("gpt", seed);
    Module m = b.module("Gpt");
    m.register_module("tok", b.embedding(kGptVocab, kGptDim, 0.02));
    m.register_module("pos", b.embedding(kGptContext, kGptDim, 0.02));
    Module blocks = b.module("Sequential");
    std::string chain = "def forward(self, x: Tensor) -> Tensor:\n";
    for (int64_t i = 0; i < kGptLayers; ++i) {
        blocks.register_module(std::to_string(i), gptBlock(b));
        chain += "    x = getattr(self, \"" + std::to_string(i) + "\").forward(x)\n";
    }
    chain += "    return x\n";
    blocks.define(chain);
    m.register_module("blocks", blocks);
    m.register_module("ln_f", b.layerNorm(kGptDim));
    m.define(R"(
def forward(self, x: Tensor) -> Tensor:
    T = x.size(1)
    positions = torch.arange(T, device=x.device)
    h = self.tok.forward(x) + self.pos.forward(positions)
    h = self.ln_f.forward(self.blocks.forward(h))
    return torch.linear(h, self.tok.weight)
)");
    return m;
}

} // namespace

Expected<torch::jit::Module> buildZooModel(const QString& name, uint64_t seed) {
    initTorchRuntime(); // every module Tandem runs is built or loaded here
    try {
        if (name == QLatin1String("mlp"))
            return buildMlp(seed);
        if (name == QLatin1String("mnist-cnn"))
            return buildMnistCnn(seed);
        if (name == QLatin1String("resnet8"))
            return buildResnet8(seed);
        if (name == QLatin1String("gpt"))
            return buildGpt(seed);
    } catch (const std::exception& e) {
        return torchError(QStringLiteral("building model %1").arg(name), e);
    }
    return makeError(ErrorCode::InvalidArgument,
                     QStringLiteral("unknown model \"%1\"; built-in models are %2, or give the "
                                    "path of a TorchScript file")
                         .arg(name, zooModelNames().join(QStringLiteral(", "))));
}

} // namespace tandem
