// Loads a GGUF file in llama.cpp itself (npm's node-llama-cpp, its prebuilt CPU library) and
// answers what the GGUF tests ask of it, as one JSON object on standard output:
//   node llama-check.mjs NODE_MODULES REQUEST.json
// REQUEST: {"model": FILE, "texts": [TEXT…], "windows": [[ID…]…], "context": N,
//           "prompt": [ID…], "generate": N}
//   texts     each tokenized with special tokens parsed and none added: "tokens"
//   windows   each window's tokens fed in one sequence, every position but the last scoring the
//             next one: "nll" (the summed negative log-likelihood) and "count"
//   prompt    greedy continuation of `generate` tokens: "greedy", "generateSeconds" (the
//             prompt's evaluation included), and "margins" (each greedy token's log-probability
//             less the runner-up's)
// Also "warnings" (every line llama.cpp logged at warning level or above while loading and
// running), "addBos" (whether llama.cpp adds a BOS), "bos", "eos" and "chatTemplate" (the
// file's template, as llama.cpp read it).
import fs from "node:fs";
import path from "node:path";
import {pathToFileURL} from "node:url";

const {getLlama, LlamaLogLevel} = await import(
    pathToFileURL(path.join(path.resolve(process.argv[2]), "node-llama-cpp", "dist", "index.js")).href);
const request = JSON.parse(fs.readFileSync(process.argv[3], "utf8"));
const warnings = [];
const llama = await getLlama({
    gpu: false,
    build: "never",
    logLevel: LlamaLogLevel.warn,
    logger(level, message) {
        if (level === LlamaLogLevel.warn || level === LlamaLogLevel.error ||
            level === LlamaLogLevel.fatal)
            warnings.push(String(message).trim());
    },
});
let model;
try {
    model = await llama.loadModel({modelPath: request.model});
} catch (e) {
    // What llama.cpp logged says why; the exception only that it failed.
    console.error(`${e.message}: ${warnings.join(" | ")}`);
    process.exit(1);
}
const out = {
    warnings,
    addBos: model.tokens.shouldPrependBosToken,
    bos: model.tokens.bos ?? -1,
    eos: model.tokens.eos ?? -1,
    chatTemplate: model.fileInfo.metadata?.tokenizer?.chat_template ?? "",
};
out.tokens = (request.texts ?? []).map((t) => Array.from(model.tokenize(t, true)));

const context = await model.createContext({contextSize: Math.max(64, request.context ?? 64) + 64,
                                           batchSize: 512, threads: 2});
// One sequence, its history cleared before each use.
const sequence = context.getSequence();
let nll = 0, count = 0;
for (const window of request.windows ?? []) {
    await sequence.clearHistory();
    const input = window.map((id, i) => i + 1 < window.length
        ? [id, {generateNext: {probabilities: true, options: {temperature: 1, topK: 0, topP: 1,
                                                                minP: 0}}}]
        : id);
    const results = await sequence.controlledEvaluate(input);
    for (let i = 0; i + 1 < window.length; ++i) {
        const p = results[i]?.next?.probabilities?.get(window[i + 1]) ?? 0;
        nll += -Math.log(Math.max(p, 1e-30));
        count += 1;
    }
}
out.nll = nll;
out.count = count;

if (request.prompt && request.generate) {
    await sequence.clearHistory();
    const greedy = [];
    const started = performance.now();
    for await (const token of sequence.evaluate(request.prompt, {temperature: 0})) {
        greedy.push(token);
        if (greedy.length >= request.generate)
            break;
    }
    out.greedy = greedy;
    out.generateSeconds = (performance.now() - started) / 1000;
    // How sure llama.cpp was of each greedy token: the gap in log-probability to the runner-up,
    // the continuation fed back after the prompt.
    await sequence.clearHistory();
    const all = [...request.prompt, ...greedy];
    const first = request.prompt.length - 1;
    const results = await sequence.controlledEvaluate(all.map((id, i) => i >= first &&
        i + 1 < all.length
        ? [id, {generateNext: {probabilities: true, options: {temperature: 1, topK: 0, topP: 1,
                                                                minP: 0}}}]
        : id));
    out.margins = [];
    for (let i = first; i + 1 < all.length; ++i) {
        let best = 0, second = 0;
        for (const p of results[i]?.next?.probabilities?.values() ?? []) {
            if (p > best) {
                second = best;
                best = p;
            } else if (p > second) {
                second = p;
            }
        }
        out.margins.push(Math.log(Math.max(best, 1e-30)) - Math.log(Math.max(second, 1e-30)));
    }
}
await context.dispose();
await model.dispose();
process.stdout.write(JSON.stringify(out) + "\n");
