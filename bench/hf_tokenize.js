// Hugging Face's tokenizers library (its Rust build, npm's @anush008/tokenizers) on a text
// file, for bench/tokenize.sh to set Tandem's throughput beside: the file's lines in batches
// of 1000 through encodeBatch (which spreads a batch over the cores), no special tokens added.
//   node hf_tokenize.js NODE_MODULES TOKENIZER_JSON FILE  -> one JSON line
const path = require('path');
const fs = require('fs');
const { Tokenizer } = require(path.join(path.resolve(process.argv[2]), '@anush008', 'tokenizers'));
(async () => {
    const t = Tokenizer.fromFile(process.argv[3]);
    const text = fs.readFileSync(process.argv[4], 'utf8');
    const lines = text.split(/(?<=\n)/);
    const start = process.hrtime.bigint();
    let tokens = 0;
    for (let i = 0; i < lines.length; i += 1000) {
        const batch = await t.encodeBatch(lines.slice(i, i + 1000), { addSpecialTokens: false });
        for (const e of batch) tokens += e.getIds().length;
    }
    const s = Number(process.hrtime.bigint() - start) / 1e9;
    const mb = Buffer.byteLength(text, 'utf8') / 1e6;
    process.stdout.write(JSON.stringify({ reference: 'tokenizers (Rust)',
        tokenizer: path.basename(path.dirname(process.argv[3])), mb: +mb.toFixed(1), tokens,
        mb_per_s: +(mb / s).toFixed(2) }) + '\n');
})().catch((e) => {
    console.error(e);
    process.exit(1);
});
