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
// Also "warnings" (every line llama.cpp logged at warning level or above while loading and
// running), "addBos" (whether llama.cpp adds a BOS), "bos", "eos" and "chatTemplate" (the
// file's template, as llama.cpp read it).
#include "chat.h"
#include "ggml-backend.h"
#include "llama.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
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
    // The CPU backends lie beside the library (libggml-cpu-<machine>.so); ggml picks the best
    // one this processor runs.
    const std::string libs = LLAMA_CHECK_LIBS;
    ggml_backend_load_all_from_path(libs.c_str());
    llama_backend_init();

    const std::string path = request.value("model", "");
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
