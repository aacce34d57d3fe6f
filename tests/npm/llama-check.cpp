// Loads a GGUF file in llama.cpp itself (the prebuilt CPU libraries of npm's node-llama-cpp,
// compiled against the headers of the same llama.cpp release: tests/npm/build-llama-check.sh)
// and answers what the GGUF tests ask of it, as one JSON object on standard output:
//   llama-check REQUEST.json
// REQUEST: {"model": FILE, "texts": [TEXT…], "windows": [[ID…]…], "context": N,
//           "prompt": [ID…], "generate": N, "chats": [[{"role": R, "content": C}…]…]}
//   texts     each tokenized with special tokens parsed and none added: "tokens"
//   windows   each window's tokens fed in one sequence, every position but the last scoring the
//             next one: "nll" (the summed negative log-likelihood, from a softmax over the whole
//             vocabulary in double precision) and "count"
//   prompt    greedy continuation of `generate` tokens: "greedy", "generateSeconds" (the
//             prompt's evaluation included), and "margins" (each greedy token's log-probability
//             less the runner-up's)
//   chats     each conversation rendered with the file's chat template as llama.cpp's own
//             programs render it (llama-server, llama-cli: common_chat_templates_init, then
//             common_chat_templates_apply with Jinja), the generation prompt added when the last
//             message is not the assistant's: "rendered"
//   quantize  {"to": FILE, "type": "q8_0"}: before anything else, llama.cpp's own quantizer
//             (llama_model_quantize, as llama-quantize runs it, without an importance matrix)
//             writes `model` as that type to FILE; the rest of the request then reads FILE
//   cpu       which of ggml's CPU builds runs the model (libggml-cpu-NAME.so beside the library):
//             a NAME, "best" for ggml's own choice, or (the default, also from the environment's
//             LLAMA_CHECK_CPU) the best one this processor runs of those without AMX kernels.
//             ggml's AMX kernels (sapphirerapids) compute Q8_0 and K-quant products with tiles
//             of their own, and have given wrong results on files llama.cpp quantized itself; a
//             check that must not depend on the processor asks for them by name only
// Also "warnings" (every line llama.cpp logged at warning level or above while loading and
// running), "addBos" (whether llama.cpp adds a BOS), "bos", "eos" and "chatTemplate" (the
// file's template, as llama.cpp read it), "cpu" (the build that ran) and "cpus" (every CPU build
// this processor runs, with ggml's score for it).
#include "chat.h"
#include "ggml-backend.h"
#include "llama.h"

#include <nlohmann/json.hpp>

#include <dirent.h>
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

using json = nlohmann::ordered_json;

namespace {

std::vector<std::string> g_warnings;

void collect(ggml_log_level level, const char* text, void*) {
    if (level != GGML_LOG_LEVEL_WARN && level != GGML_LOG_LEVEL_ERROR)
        return;
    std::string line = text;
    while (!line.empty() && (line.back() == '\n' || line.back() == ' '))
        line.pop_back();
    if (!line.empty())
        g_warnings.push_back(line);
}

// Feeds `tokens` from position `from`, asking for the logits of every position at or after
// `firstOutput`; false when llama.cpp refuses the batch.
bool decode(llama_context* ctx, const std::vector<llama_token>& tokens, int from, int firstOutput) {
    llama_batch batch = llama_batch_init(int32_t(tokens.size()), 0, 1);
    batch.n_tokens = int32_t(tokens.size());
    for (size_t i = 0; i < tokens.size(); ++i) {
        batch.token[i] = tokens[i];
        batch.pos[i] = from + int(i);
        batch.n_seq_id[i] = 1;
        batch.seq_id[i][0] = 0;
        batch.logits[i] = int(i) >= firstOutput;
    }
    const int32_t rc = llama_decode(ctx, batch);
    llama_batch_free(batch);
    return rc == 0;
}

// log p(token) and the best and second-best log-probabilities at output `i`.
struct Scores {
    double logp = 0, best = 0, second = 0;
    llama_token argmax = 0;
};

Scores scores(llama_context* ctx, int i, int vocab, llama_token token) {
    const float* logits = llama_get_logits_ith(ctx, i);
    Scores s;
    double max = -INFINITY, second = -INFINITY;
    for (int v = 0; v < vocab; ++v) {
        const double x = logits[v];
        if (x > max) {
            second = max;
            max = x;
            s.argmax = v;
        } else if (x > second) {
            second = x;
        }
    }
    double sum = 0;
    for (int v = 0; v < vocab; ++v)
        sum += std::exp(double(logits[v]) - max);
    const double lse = max + std::log(sum);
    s.best = max - lse;
    s.second = second - lse;
    s.logp = token >= 0 && token < vocab ? double(logits[token]) - lse : -INFINITY;
    return s;
}

// ggml's CPU builds beside the library that this processor runs: name (the NAME of
// libggml-cpu-NAME.so) and ggml's own score for it (ggml_backend_score; 0 where the processor
// lacks an instruction the build uses).
std::vector<std::pair<std::string, int>> cpuBuilds(const std::string& dir) {
    std::vector<std::pair<std::string, int>> out;
    DIR* d = opendir(dir.c_str());
    if (!d)
        return out;
    const std::string prefix = "libggml-cpu-", suffix = ".so";
    while (const dirent* e = readdir(d)) {
        const std::string file = e->d_name;
        if (file.size() <= prefix.size() + suffix.size() || file.rfind(prefix, 0) != 0 ||
            file.compare(file.size() - suffix.size(), suffix.size(), suffix) != 0)
            continue;
        void* handle = dlopen((dir + "/" + file).c_str(), RTLD_NOW | RTLD_LOCAL);
        if (!handle)
            continue;
        using Score = int (*)();
        const auto score = reinterpret_cast<Score>(dlsym(handle, "ggml_backend_score"));
        const int s = score ? score() : 0;
        dlclose(handle);
        if (s > 0)
            out.emplace_back(
                file.substr(prefix.size(), file.size() - prefix.size() - suffix.size()), s);
    }
    closedir(d);
    std::sort(out.begin(), out.end(),
              [](const auto& a, const auto& b) { return a.second > b.second; });
    return out;
}

bool hasAmxKernels(const std::string& build) {
    return build == "sapphirerapids";
}

// Loads the CPU build `wanted` asks for (see the header); its name, or "" with a message.
std::string loadCpuBuild(const std::string& dir, const std::string& wanted,
                         const std::vector<std::pair<std::string, int>>& builds) {
    if (wanted == "best") {
        ggml_backend_load_all_from_path(dir.c_str());
        return builds.empty() ? std::string("none") : builds.front().first;
    }
    std::string chosen;
    for (const auto& [name, score] : builds)
        if (wanted.empty() ? !hasAmxKernels(name) : name == wanted) {
            chosen = name;
            break;
        }
    if (chosen.empty()) {
        std::string runnable;
        for (const auto& b : builds)
            runnable += " " + b.first;
        std::fprintf(stderr,
                     "llama-check: this processor runs no CPU build of llama.cpp named \"%s\" "
                     "(it runs:%s)\n",
                     wanted.empty() ? "(any without AMX)" : wanted.c_str(), runnable.c_str());
        return "";
    }
    if (!ggml_backend_load((dir + "/libggml-cpu-" + chosen + ".so").c_str())) {
        std::fprintf(stderr, "llama-check: ggml cannot load its CPU build %s from %s\n",
                     chosen.c_str(), dir.c_str());
        return "";
    }
    return chosen;
}

bool quantize(const std::string& from, const json& how) {
    const std::string to = how.value("to", "");
    const std::string type = how.value("type", "");
    llama_model_quantize_params qp = llama_model_quantize_default_params();
    qp.nthread = 2;
    if (type == "q8_0") {
        qp.ftype = LLAMA_FTYPE_MOSTLY_Q8_0;
    } else if (type == "q4_k_m") {
        qp.ftype = LLAMA_FTYPE_MOSTLY_Q4_K_M;
    } else {
        std::fprintf(stderr, "llama-check: no quantization named \"%s\" (q8_0, q4_k_m)\n",
                     type.c_str());
        return false;
    }
    if (to.empty() || llama_model_quantize(from.c_str(), to.c_str(), &qp) != 0) {
        std::fprintf(stderr, "llama-check: llama.cpp could not quantize %s to %s\n", from.c_str(),
                     to.c_str());
        return false;
    }
    return true;
}

} // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s REQUEST.json\n", argv[0]);
        return 2;
    }
    json request;
    try {
        std::ifstream in(argv[1]);
        request = json::parse(in);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "llama-check: %s: %s\n", argv[1], e.what());
        return 2;
    }
    llama_log_set(collect, nullptr);
    // The CPU builds lie beside the library (libggml-cpu-NAME.so).
    const std::string libs = LLAMA_CHECK_LIBS;
    const char* fromEnv = std::getenv("LLAMA_CHECK_CPU");
    const std::string wanted = request.value("cpu", fromEnv ? std::string(fromEnv) : "");
    const auto builds = cpuBuilds(libs);
    const std::string cpu = loadCpuBuild(libs, wanted, builds);
    if (cpu.empty())
        return 1;
    llama_backend_init();

    std::string path = request.value("model", "");
    if (request.contains("quantize")) {
        if (!quantize(path, request["quantize"]))
            return 1;
        path = request["quantize"].value("to", "");
        // What the quantizer logged is its report, not a warning about the file.
        g_warnings.clear();
    }
    llama_model_params mp = llama_model_default_params();
    mp.n_gpu_layers = 0;
    llama_model* model = llama_model_load_from_file(path.c_str(), mp);
    if (!model) {
        std::string log;
        for (const std::string& w : g_warnings)
            log += " | " + w;
        std::fprintf(stderr, "llama-check: llama.cpp cannot load %s%s\n", path.c_str(),
                     log.c_str());
        return 1;
    }
    const llama_vocab* vocab = llama_model_get_vocab(model);
    const int nVocab = llama_vocab_n_tokens(vocab);
    json out;
    out["cpu"] = cpu;
    json runnable = json::object();
    for (const auto& [name, score] : builds)
        runnable[name] = score;
    out["cpus"] = runnable;
    out["addBos"] = llama_vocab_get_add_bos(vocab);
    out["bos"] = llama_vocab_bos(vocab);
    out["eos"] = llama_vocab_eos(vocab);
    const char* tmpl = llama_model_chat_template(model, nullptr);
    out["chatTemplate"] = tmpl ? tmpl : "";

    json tokens = json::array();
    for (const auto& t : request.value("texts", json::array())) {
        const std::string text = t.get<std::string>();
        std::vector<llama_token> ids(text.size() + 8);
        int n = llama_tokenize(vocab, text.data(), int32_t(text.size()), ids.data(),
                               int32_t(ids.size()), false, true);
        if (n < 0) {
            ids.resize(size_t(-n));
            n = llama_tokenize(vocab, text.data(), int32_t(text.size()), ids.data(),
                               int32_t(ids.size()), false, true);
        }
        ids.resize(size_t(std::max(n, 0)));
        tokens.push_back(ids);
    }
    out["tokens"] = tokens;

    int status = 0;
    llama_context_params cp = llama_context_default_params();
    cp.n_ctx = uint32_t(std::max(64, request.value("context", 64)) + 64);
    cp.n_batch = 512;
    cp.n_threads = cp.n_threads_batch = 2;
    // A sliding-window block's cache holds its window, as in llama-server and node-llama-cpp.
    cp.swa_full = false;
    llama_context* ctx = llama_init_from_model(model, cp);
    if (!ctx) {
        std::fprintf(stderr, "llama-check: llama.cpp cannot make a context for %s\n", path.c_str());
        llama_model_free(model);
        return 1;
    }
    double nll = 0;
    int count = 0;
    for (const auto& w : request.value("windows", json::array())) {
        const std::vector<llama_token> window = w.get<std::vector<llama_token>>();
        if (window.size() < 2)
            continue;
        llama_memory_clear(llama_get_memory(ctx), true);
        if (!decode(ctx, std::vector<llama_token>(window.begin(), window.end() - 1), 0, 0)) {
            std::fprintf(stderr, "llama-check: llama.cpp refused a window\n");
            status = 1;
            break;
        }
        for (size_t i = 0; i + 1 < window.size(); ++i) {
            nll -= scores(ctx, int(i), nVocab, window[i + 1]).logp;
            ++count;
        }
    }
    out["nll"] = nll;
    out["count"] = count;

    const std::vector<llama_token> prompt =
        request.value("prompt", json::array()).get<std::vector<llama_token>>();
    const int generate = request.value("generate", 0);
    if (status == 0 && !prompt.empty() && generate > 0) {
        llama_memory_clear(llama_get_memory(ctx), true);
        const auto started = std::chrono::steady_clock::now();
        std::vector<llama_token> greedy;
        json margins = json::array();
        bool ok = decode(ctx, prompt, 0, int(prompt.size()) - 1);
        int at = 0;
        while (ok && int(greedy.size()) < generate) {
            const Scores s = scores(ctx, -1, nVocab, -1);
            greedy.push_back(s.argmax);
            margins.push_back(s.best - s.second);
            if (int(greedy.size()) < generate)
                ok = decode(ctx, {s.argmax}, int(prompt.size()) + at++, 0);
        }
        if (!ok) {
            std::fprintf(stderr, "llama-check: llama.cpp stopped generating\n");
            status = 1;
        }
        out["greedy"] = greedy;
        out["margins"] = margins;
        out["generateSeconds"] =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    }

    const json chats = request.value("chats", json::array());
    if (status == 0 && !chats.empty()) {
        try {
            common_chat_templates_ptr templates = common_chat_templates_init(model, "");
            json rendered = json::array();
            for (const auto& chat : chats) {
                common_chat_templates_inputs inputs;
                for (const auto& m : chat) {
                    common_chat_msg msg;
                    msg.role = m.value("role", "");
                    msg.content = m.value("content", "");
                    inputs.messages.push_back(msg);
                }
                inputs.use_jinja = true;
                inputs.add_generation_prompt =
                    !inputs.messages.empty() && inputs.messages.back().role != "assistant";
                rendered.push_back(common_chat_templates_apply(templates.get(), inputs).prompt);
            }
            out["rendered"] = rendered;
        } catch (const std::exception& e) {
            std::fprintf(stderr, "llama-check: llama.cpp's chat formatting failed: %s\n", e.what());
            status = 1;
        }
    }
    llama_free(ctx);
    llama_model_free(model);
    out["warnings"] = g_warnings;
    if (status == 0)
        std::cout << out.dump(-1, ' ', false, json::error_handler_t::replace) << "\n";
    return status;
}
