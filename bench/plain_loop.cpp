// The reference for the engine-overhead benchmark: the idiomatic LibTorch C++ training loop
// (as in pytorch/examples cpp/mnist) on the same network, data, batch, optimizer and thread
// count as `tandem train --model mnist-cnn`, or on a TorchScript file as `tandem train --model
// FILE`. Prints samples/s over the training loop only.
//
//   bench_plain_loop STEPS THREADS [BATCH [MODEL.pt]]

#include "formats/dataset.h"

#include <torch/script.h>
#include <torch/torch.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

namespace {

struct Net : torch::nn::Module {
    Net()
        : conv1(register_module("conv1", torch::nn::Conv2d(1, 32, 3)))
        , conv2(register_module("conv2", torch::nn::Conv2d(32, 64, 3)))
        , fc1(register_module("fc1", torch::nn::Linear(9216, 128)))
        , fc2(register_module("fc2", torch::nn::Linear(128, 10))) {}
    torch::Tensor forward(torch::Tensor x) {
        x = torch::relu(conv1->forward(x));
        x = torch::max_pool2d(torch::relu(conv2->forward(x)), 2);
        x = torch::relu(fc1->forward(x.flatten(1)));
        return fc2->forward(x);
    }
    torch::nn::Conv2d conv1, conv2;
    torch::nn::Linear fc1, fc2;
};

} // namespace

int main(int argc, char** argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s STEPS THREADS [BATCH]\n", argv[0]);
        return 2;
    }
    const int steps = atoi(argv[1]), threads = atoi(argv[2]);
    const int batch = argc > 3 ? atoi(argv[3]) : 64;
    torch::set_num_threads(threads);
    torch::manual_seed(0);

    auto data = tandem::loadDataset(QStringLiteral("fashion-mnist"));
    if (!data) {
        fprintf(stderr, "%s\n", qPrintable(data.error().message));
        return 1;
    }
    const auto n = data->train.count();
    // The whole training split as one uint8 tensor; batches are indexed and scaled to [0,1]
    // inside the loop, as the engine does.
    torch::Tensor images = torch::from_blob(data->train.u8.data(), {n, 1, 28, 28}, torch::kByte);
    torch::Tensor labels = torch::from_blob(data->train.labels.data(), {n}, torch::kLong);

    Net net;
    torch::jit::Module script;
    const bool scripted = argc > 4;
    if (scripted)
        script = torch::jit::load(argv[4]);
    std::vector<torch::Tensor> params;
    if (scripted)
        for (const auto& p : script.parameters())
            params.push_back(p);
    else
        params = net.parameters();
    torch::optim::Adam opt(params, torch::optim::AdamOptions(0.001));
    if (scripted)
        script.train();
    else
        net.train();
    auto forward = [&](const torch::Tensor& x) {
        return scripted ? script.forward({x}).toTensor() : net.forward(x);
    };
    torch::Tensor perm = torch::randperm(n);
    int64_t pos = 0;
    const auto t0 = std::chrono::steady_clock::now();
    double lossSum = 0;
    for (int s = 0; s < steps; ++s) {
        if (pos + batch > n) {
            perm = torch::randperm(n);
            pos = 0;
        }
        torch::Tensor idx = perm.slice(0, pos, pos + batch);
        pos += batch;
        torch::Tensor x = images.index_select(0, idx).to(torch::kFloat).div_(255.0);
        torch::Tensor y = labels.index_select(0, idx);
        opt.zero_grad();
        torch::Tensor loss = torch::nll_loss(torch::log_softmax(forward(x), 1), y);
        loss.backward();
        opt.step();
        lossSum += loss.item<double>();
    }
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    printf("{\"samples_per_s\": %.2f, \"steps\": %d, \"threads\": %d, \"batch\": %d, "
           "\"mean_loss\": %.4f}\n",
           double(steps) * batch / secs, steps, threads, batch, lossSum / steps);
    return 0;
}
