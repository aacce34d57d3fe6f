// Hugging Face's tokenizers library itself (its Rust build, @anush008/tokenizers) on texts, for
// the tests to hold Tandem's tokenizer against:
//   node tokenize.js NODE_MODULES < {"file": tokenizer.json, "texts": [...]}
//   -> {"ids": [[...] per text, special tokens added], "plain": [[...] without],
//       "decoded": [the plain ids decoded back, special tokens kept]}
const path = require('path');
const { Tokenizer } = require(path.join(path.resolve(process.argv[2]), '@anush008', 'tokenizers'));
const input = JSON.parse(require('fs').readFileSync(0, 'utf8'));
(async () => {
    const t = Tokenizer.fromFile(input.file);
    const out = { ids: [], plain: [], decoded: [] };
    for (const s of input.texts) {
        out.ids.push(Array.from((await t.encode(s, null, { addSpecialTokens: true })).getIds()));
        const plain = Array.from((await t.encode(s, null, { addSpecialTokens: false })).getIds());
        out.plain.push(plain);
        out.decoded.push(await t.decode(plain, false));
    }
    process.stdout.write(JSON.stringify(out));
})().catch((e) => {
    console.error(e);
    process.exit(1);
});
