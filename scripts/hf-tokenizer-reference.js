#!/usr/bin/env node
// Writes the small tokenizer.json files of tests/test_hf_tokenizer.cpp, runs the real Hugging Face
// tokenizers library on them (its Node binding: `npm install tokenizers` in a scratch folder,
// dev-time only; neither the build nor CI needs it), and prints tests/hf_tokenizer_reference.inc:
// each file's text and, for many strings, the library's encode(text, add_special_tokens) ids and
// decode(ids). The test hard-codes that output as its oracle.
// Usage: NODE_PATH=SCRATCH/node_modules node scripts/hf-tokenizer-reference.js > tests/hf_tokenizer_reference.inc
// With --seeds DIR it writes the fuzz target's seeds instead (tests/fuzz/corpus/hf_tokenizer):
// a few of the files, each followed by a NUL byte and a text, and a refused one.
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const { Tokenizer } = require('tokenizers');

// GPT-2's bytes_to_unicode.
const B2U = (() => {
  const bs = [];
  for (let b = 33; b <= 126; b++) bs.push(b);
  for (let b = 161; b <= 172; b++) bs.push(b);
  for (let b = 174; b <= 255; b++) bs.push(b);
  const cs = bs.slice();
  let n = 0;
  for (let b = 0; b < 256; b++)
    if (!bs.includes(b)) { bs.push(b); cs.push(256 + n); n++; }
  const t = {};
  bs.forEach((b, i) => { t[b] = String.fromCodePoint(cs[i]); });
  return t;
})();
const bl = (s) => Array.from(Buffer.from(s, 'utf8')).map((b) => B2U[b]).join('');

// A vocabulary: `first` tokens, then the 256 byte-level characters, then each merge's result.
function byteLevelVocab(first, merges, extra = []) {
  const vocab = {};
  let id = 0;
  for (const t of first) vocab[t] = id++;
  for (let b = 0; b < 256; b++) vocab[B2U[b]] = id++;
  for (const [a, b] of merges) if (!(a + b in vocab)) vocab[a + b] = id++;
  for (const t of extra) if (!(t in vocab)) vocab[t] = id++;
  return vocab;
}
const added = (id, content, special = true, more = {}) => Object.assign(
  { id, content, single_word: false, lstrip: false, rstrip: false, normalized: !special, special },
  more);
const pairs = (words) => words.map((w) => w.split('|').map(bl));
const asStrings = (ms) => ms.map(([a, b]) => a + ' ' + b);

// Merges of the byte-level tokenizers, written in plain text and mapped to byte-level spelling.
// (Written "left|right" in plain text; é's two bytes are merged first.)
const BL_MERGES = [[B2U[0xC3], B2U[0xA9]]].concat(pairs([' |t', 'h|e', ' t|he', 'i|n', ' |a', 'e|r',
  'o|n', ' |w', 'o|r', ' w|or', 'l|d', ' wor|ld', 'l|l', 'e|ll', 'h|ell', 'hell|o', ' |h', ' h|ell',
  ' hell|o', '1|2', '\n|\n', 'c|a', 'ca|f', ' |caf', ' caf|é', 'i|s', ' |is', ' |1',
  ' 1|2', 'é|t', 'ét|é', ' | ', '  |  ']));

const LLAMA3_PATTERN = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const QWEN2_PATTERN = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

const tokenizers = {};

// SmolLM2 / GPT-2: Digits then ByteLevel with GPT-2's regex, no BOS, merges as "a b".
{
  const specials = ['<|endoftext|>', '<|im_start|>', '<|im_end|>'];
  tokenizers.smollm2 = {
    version: '1.0', truncation: null, padding: null,
    added_tokens: specials.map((s, i) => added(i, s)),
    normalizer: null,
    pre_tokenizer: { type: 'Sequence', pretokenizers: [
      { type: 'Digits', individual_digits: true },
      { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true }] },
    post_processor: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: false, use_regex: true },
    decoder: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
    model: { type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: '',
      end_of_word_suffix: '', fuse_unk: false, byte_fallback: false,
      vocab: byteLevelVocab(specials, BL_MERGES), merges: asStrings(BL_MERGES) },
  };
}

// Llama 3: Split with its regex, ByteLevel without one, <|begin_of_text|> by TemplateProcessing,
// merges as pairs, ignore_merges; the special tokens are outside model.vocab.
{
  const vocab = byteLevelVocab([], BL_MERGES, [bl(' hello'), bl('world')]);
  const n = Object.keys(vocab).length;
  const specials = ['<|begin_of_text|>', '<|end_of_text|>', '<|eot_id|>'];
  tokenizers.llama3 = {
    version: '1.0', truncation: null, padding: null,
    added_tokens: specials.map((s, i) => added(n + i, s)),
    normalizer: null,
    pre_tokenizer: { type: 'Sequence', pretokenizers: [
      { type: 'Split', pattern: { Regex: LLAMA3_PATTERN }, behavior: 'Isolated', invert: false },
      { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: false }] },
    post_processor: { type: 'Sequence', processors: [
      { type: 'ByteLevel', add_prefix_space: true, trim_offsets: false, use_regex: true },
      { type: 'TemplateProcessing',
        single: [{ SpecialToken: { id: '<|begin_of_text|>', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }],
        pair: [{ SpecialToken: { id: '<|begin_of_text|>', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } },
          { SpecialToken: { id: '<|begin_of_text|>', type_id: 1 } }, { Sequence: { id: 'B', type_id: 1 } }],
        special_tokens: { '<|begin_of_text|>': { id: '<|begin_of_text|>', ids: [n], tokens: ['<|begin_of_text|>'] } } }] },
    decoder: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
    model: { type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: null,
      end_of_word_suffix: null, fuse_unk: false, byte_fallback: false, ignore_merges: true,
      vocab, merges: BL_MERGES },
  };
  // The same without ignore_merges: " hello" and "world" are then built by merges (or not).
  tokenizers.llama3_merging = JSON.parse(JSON.stringify(tokenizers.llama3));
  tokenizers.llama3_merging.model.ignore_merges = false;
}

// Qwen2: NFC, Split with its regex, ByteLevel, no BOS (ByteLevel post-processor only).
{
  const vocab = byteLevelVocab([], BL_MERGES);
  const n = Object.keys(vocab).length;
  const specials = ['<|endoftext|>', '<|im_start|>', '<|im_end|>'];
  tokenizers.qwen2 = {
    version: '1.0', truncation: null, padding: null,
    added_tokens: specials.map((s, i) => added(n + i, s)),
    normalizer: { type: 'NFC' },
    pre_tokenizer: { type: 'Sequence', pretokenizers: [
      { type: 'Split', pattern: { Regex: QWEN2_PATTERN }, behavior: 'Isolated', invert: false },
      { type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: false }] },
    post_processor: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: false },
    decoder: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: false },
    model: { type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: '',
      end_of_word_suffix: '', fuse_unk: false, byte_fallback: false, ignore_merges: false,
      vocab, merges: asStrings(BL_MERGES) },
  };
}

// SentencePiece-style BPE vocabularies (Llama 2, TinyLlama, Mistral): ▁ for spaces, <0xNN> bytes.
function spVocab(merges, chars) {
  const vocab = { '<unk>': 0, '<s>': 1, '</s>': 2 };
  let id = 3;
  for (let b = 0; b < 256; b++) vocab['<0x' + b.toString(16).toUpperCase().padStart(2, '0') + '>'] = id++;
  for (const c of chars) if (!(c in vocab)) vocab[c] = id++;
  for (const [a, b] of merges) if (!(a + b in vocab)) vocab[a + b] = id++;
  return vocab;
}
const SP_MERGES = ['▁ t', 'h e', '▁t he', '▁ w', 'o r', '▁w or', 'l d', '▁wor ld', 'l l', 'e ll',
  'h ell', 'hell o', '▁ hello', '▁ a', 'é t', '▁ 1', '1 2', '▁ ▁', '▁▁ ▁▁']
  .map((s) => s.split(' '));
const SP_CHARS = ['▁', 'a', 'd', 'e', 'h', 'l', 'o', 'r', 't', 'w', 'é', '1', '2', '.', ',', '\n'];
const SP_SPECIALS = [added(0, '<unk>'), added(1, '<s>'), added(2, '</s>')];
const BOS_TEMPLATE = { type: 'TemplateProcessing',
  single: [{ SpecialToken: { id: '<s>', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }],
  pair: [{ SpecialToken: { id: '<s>', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } },
    { SpecialToken: { id: '<s>', type_id: 1 } }, { Sequence: { id: 'B', type_id: 1 } }],
  special_tokens: { '<s>': { id: '<s>', ids: [1], tokens: ['<s>'] } } };

// Llama 2 as converted today: Prepend + Replace normalizer, no pre-tokenizer, byte fallback.
tokenizers.llama2 = {
  version: '1.0', truncation: null, padding: null, added_tokens: SP_SPECIALS,
  normalizer: { type: 'Sequence', normalizers: [{ type: 'Prepend', prepend: '▁' },
    { type: 'Replace', pattern: { String: ' ' }, content: '▁' }] },
  pre_tokenizer: null,
  post_processor: BOS_TEMPLATE,
  decoder: { type: 'Sequence', decoders: [
    { type: 'Replace', pattern: { String: '▁' }, content: ' ' }, { type: 'ByteFallback' },
    { type: 'Fuse' }, { type: 'Strip', content: ' ', start: 1, stop: 0 }] },
  model: { type: 'BPE', dropout: null, unk_token: '<unk>', continuing_subword_prefix: null,
    end_of_word_suffix: null, fuse_unk: true, byte_fallback: true, ignore_merges: false,
    vocab: spVocab(SP_MERGES, SP_CHARS), merges: asStrings(SP_MERGES) },
};

// Other decoders: Replace with a regex, Strip at both ends.
tokenizers.decoders = JSON.parse(JSON.stringify(tokenizers.llama2));
tokenizers.decoders.decoder = { type: 'Sequence', decoders: [
  { type: 'Replace', pattern: { Regex: '▁+' }, content: ' ' }, { type: 'ByteFallback' },
  { type: 'Fuse' }, { type: 'Strip', content: ' ', start: 2, stop: 1 }] };
// (The library panics when Strip's stop meets an empty token, so no text here decodes to
// only spaces.)

// Mistral-style: the Metaspace pre-tokenizer (prepend "first", no split) and decoder.
tokenizers.metaspace = {
  version: '1.0', truncation: null, padding: null, added_tokens: SP_SPECIALS,
  normalizer: null,
  pre_tokenizer: { type: 'Metaspace', replacement: '▁', prepend_scheme: 'first', split: false },
  post_processor: BOS_TEMPLATE,
  decoder: { type: 'Sequence', decoders: [{ type: 'ByteFallback' }, { type: 'Fuse' },
    { type: 'Metaspace', replacement: '▁', prepend_scheme: 'first', split: false }] },
  model: { type: 'BPE', dropout: null, unk_token: '<unk>', continuing_subword_prefix: null,
    end_of_word_suffix: null, fuse_unk: true, byte_fallback: true, ignore_merges: false,
    vocab: spVocab(SP_MERGES, SP_CHARS), merges: SP_MERGES },
};
// Metaspace with split and prepend "always"; no byte fallback: unknown characters are <unk>.
tokenizers.metaspace_split = JSON.parse(JSON.stringify(tokenizers.metaspace));
Object.assign(tokenizers.metaspace_split.pre_tokenizer, { prepend_scheme: 'always', split: true });
tokenizers.metaspace_split.decoder = { type: 'Metaspace', replacement: '▁', prepend_scheme: 'always', split: true };
tokenizers.metaspace_split.model.byte_fallback = false;
tokenizers.metaspace_split.model.fuse_unk = false;

// RoBERTa-style ByteLevel with add_prefix_space (every piece between added tokens gets its space).
tokenizers.bytelevel_prefix = JSON.parse(JSON.stringify(tokenizers.smollm2));
tokenizers.bytelevel_prefix.pre_tokenizer = { type: 'ByteLevel', add_prefix_space: true,
  trim_offsets: true, use_regex: true };

// continuing_subword_prefix and end_of_word_suffix, with a Whitespace-free Split pre-tokenizer.
{
  const vocab = { '<unk>': 0 };
  for (const c of 'abcdehlorw') { vocab[c] = Object.keys(vocab).length; }
  for (const c of 'abcdehlorw') { vocab['##' + c] = Object.keys(vocab).length; }
  for (const c of 'abcdehlorw') { vocab[c + '</w>'] = Object.keys(vocab).length; }
  for (const c of 'abcdehlorw') { vocab['##' + c + '</w>'] = Object.keys(vocab).length; }
  const merges = [['h', '##e'], ['he', '##l'], ['##l', '##o</w>'], ['hel', '##lo</w>'],
    ['w', '##o'], ['wo', '##r'], ['##l', '##d</w>'], ['wor', '##ld</w>']];
  for (const [a, b] of merges) vocab[a + b.slice(2)] = Object.keys(vocab).length;
  tokenizers.subword_affixes = {
    version: '1.0', truncation: null, padding: null, added_tokens: [added(0, '<unk>')],
    normalizer: null,
    pre_tokenizer: { type: 'Split', pattern: { String: ' ' }, behavior: 'Removed', invert: false },
    post_processor: null, decoder: { type: 'Fuse' },
    model: { type: 'BPE', dropout: null, unk_token: '<unk>', continuing_subword_prefix: '##',
      end_of_word_suffix: '</w>', fuse_unk: false, byte_fallback: false, vocab, merges },
  };
}

// Metaspace as older files write it: add_prefix_space instead of prepend_scheme.
tokenizers.metaspace_legacy = JSON.parse(JSON.stringify(tokenizers.metaspace_split));
tokenizers.metaspace_legacy.pre_tokenizer = { type: 'Metaspace', replacement: '▁',
  add_prefix_space: true };
tokenizers.metaspace_legacy.decoder = { type: 'Metaspace', replacement: '▁', add_prefix_space: true };

// Split behaviours: a character vocabulary whose merges ("a -", "- b", ...) show where the pieces
// were cut; Digits (contiguous), a Replace normalizer with a regex, added tokens with lstrip,
// rstrip and single_word.
for (const behavior of ['Isolated', 'Removed', 'MergedWithPrevious', 'MergedWithNext', 'Contiguous']) {
  for (const invert of [false, true]) {
    const chars = Array.from(' abcdxyz-0123456789');
    const vocab = { '[UNK]': 0 };
    chars.forEach((c, i) => { vocab[c] = i + 1; });
    const merges = [['a', '-'], ['-', 'b'], ['-', '-'], ['a', 'b'], ['1', '2'], ['x', 'y'], ['-', 'x']];
    for (const [a, b] of merges) if (!(a + b in vocab)) vocab[a + b] = Object.keys(vocab).length;
    const n = Object.keys(vocab).length;
    tokenizers[`split_${behavior}${invert ? '_invert' : ''}`] = {
      version: '1.0', truncation: null, padding: null,
      added_tokens: [added(n, '[X]', true, { lstrip: true, rstrip: true }),
        added(n + 1, 'zz', false, { single_word: true })],
      normalizer: { type: 'Replace', pattern: { Regex: '\\s{2,}' }, content: ' ' },
      pre_tokenizer: { type: 'Sequence', pretokenizers: [
        { type: 'Split', pattern: { String: '-' }, behavior, invert },
        { type: 'Digits', individual_digits: false }] },
      post_processor: null,
      decoder: null,
      model: { type: 'BPE', dropout: null, unk_token: '[UNK]', continuing_subword_prefix: null,
        end_of_word_suffix: null, fuse_unk: false, byte_fallback: false, vocab, merges },
    };
  }
}

const TEXTS = {
  common: ['', 'hello world', 'Hello World', ' hello', 'hello  world', 'the  quick\n\nbrown   fox',
    'the\tcafé', 'café été', 'cafe\u0301 (e + combining acute)', '12 123 1234 12345', 'x=12.5%',
    "it's we'll THEY'RE I'M", '  leading and trailing  ', '\n\n\n', ' \n \n', 'a\r\nb',
    '日本語のテキスト', 'Привет, мир', 'emoji 🙂👍🏽 done', 'tab\there', 'nel\u0085next',
    'nbsp\u00a0here', 'end with space ', '١٢٣ arabic digits', 'mixed123abc456'],
  smollm2: ['<|im_start|>user\nhello<|im_end|>', 'a<|endoftext|>b', '<|endoftext|><|endoftext|>',
    '<|im_start|', '<|endoftext|> hello'],
  llama3: ['<|begin_of_text|>hello', 'x<|eot_id|>y', '<|end_of_text|> world', 'hello world helloworld'],
  qwen2: ['<|im_start|>system\nYou are<|im_end|>\n', 'cafe\u0301 café', '<|endoftext|>'],
  llama2: ['<s>hello', 'hello</s>', 'hello <s> world', 'the world 🙂', '<unk>', 'Ωmega', '\n', 'héllo'],
  affixes: ['hello world', 'hello', 'he', 'h', 'world hello x', 'wor ld', 'abc de'],
  split: ['a-b', 'a--b', 'a-b-', '-a-b', 'x-y-z', 'ab12-34cd', 'a [X] b', 'a  [X]b', 'zz a zz',
    'azz zza zz', 'a   b  c', '--', 'q-w', 'a-12-b'],
};
TEXTS.common_nonempty = TEXTS.common.filter((s) => s.trim() !== '');
const TEXT_SETS = { smollm2: ['common', 'smollm2'], llama3: ['common', 'llama3'],
  llama3_merging: ['common', 'llama3'], qwen2: ['common', 'qwen2'], llama2: ['common', 'llama2'],
  metaspace: ['common', 'llama2'], decoders: ['common_nonempty'], metaspace_split: ['common', 'llama2'],
  metaspace_legacy: ['common', 'llama2'],
  bytelevel_prefix: ['common', 'smollm2'], subword_affixes: ['affixes'] };

// Id lists decoded only (encode never gives them): bytes that are not UTF-8, specials.
const BYTE = (b) => 3 + b;  // the byte tokens' ids in smollm2 and llama2
const DECODE_ONLY = {
  smollm2: [[BYTE(0xE2), BYTE(0x82)], [BYTE(0xE2), BYTE(0x82), BYTE(0x61)], [BYTE(0xFF), 0, 1],
    [BYTE(0xF0), BYTE(0x9F), BYTE(0x99), BYTE(0x82)], [5000, 2]],
  llama2: [[BYTE(0xE2), BYTE(0x82)], [BYTE(0xE2), BYTE(0x82), BYTE(0xAC)], [BYTE(0xFF), 259],
    [1, BYTE(0x41), 2], [259, 259, 2, 259], [0, 0]],
  metaspace: [[259, 259, 1, 259], [BYTE(0x41), 259]],
};

const cxx = (s) => {
  // A C++ string literal of UTF-8 bytes: printable ASCII as is, the rest as octal escapes.
  let out = '"';
  for (const b of Buffer.from(s, 'utf8')) {
    if (b === 0x22 || b === 0x5c) out += '\\' + String.fromCharCode(b);
    else if (b >= 0x20 && b < 0x7f && b !== 0x3f) out += String.fromCharCode(b);
    else out += '\\' + b.toString(8).padStart(3, '0');
  }
  return out + '"';
};

const SEEDS = { split_MergedWithNext: 'a-b [X] zz 12-34', subword_affixes: 'hello world x',
  llama2: '<s>hello w\u00f6rld \ud83d\ude42', metaspace_split: ' the  world', qwen2: 'caf\u00e9 12 <|im_end|>' };
if (process.argv[2] === '--seeds') {
  const out = process.argv[3];
  fs.mkdirSync(out, { recursive: true });
  for (const [name, text] of Object.entries(SEEDS))
    fs.writeFileSync(path.join(out, name), Buffer.concat([Buffer.from(JSON.stringify(tokenizers[name])),
      Buffer.from([0]), Buffer.from(text, 'utf8')]));
  const wordpiece = JSON.parse(JSON.stringify(tokenizers.subword_affixes));
  wordpiece.model.type = 'WordPiece';
  fs.writeFileSync(path.join(out, 'refused_wordpiece'), JSON.stringify(wordpiece));
  process.exit(0);
}

(async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hf-tok-'));
  const lines = [
    '// Generated by scripts/hf-tokenizer-reference.js from the Hugging Face tokenizers library',
    `// (Node binding ${require('tokenizers/package.json').version}): do not edit by hand.`,
    '// kHfReference: each tokenizer.json and the library\'s encode(text, add_special_tokens=true)',
    '// ids (separated by spaces), decode(ids, skip_special_tokens=false) and decode(ids,',
    '// skip_special_tokens=true) for each text.',
    '// clang-format off',
    'const HfReferenceTokenizer kHfReference[] = {'];
  for (const [name, tok] of Object.entries(tokenizers)) {
    const file = path.join(dir, name + '.json');
    const text = JSON.stringify(tok);
    fs.writeFileSync(file, text);
    const t = Tokenizer.fromFile(file);
    const sets = TEXT_SETS[name] || ['split'];
    lines.push(`  {${cxx(name)}, ${cxx(text)}, {`);
    for (const set of sets)
      for (const s of TEXTS[set]) {
        const enc = await t.encode(s, null, { addSpecialTokens: true });
        const ids = enc.getIds();
        const back = await t.decode(ids, false);
        const skipped = await t.decode(ids, true);
        lines.push(`    {${cxx(s)}, "${ids.join(' ')}", ${cxx(back)}, ${cxx(skipped)}},`);
      }
    lines.push('  }},');
  }
  lines.push('};', '// Id lists decoded only: tokenizer, ids, decode(ids, false), decode(ids, true).',
    'const HfReferenceDecode kHfDecodeReference[] = {');
  for (const [name, lists] of Object.entries(DECODE_ONLY)) {
    const file = path.join(dir, name + '.json');
    const t = Tokenizer.fromFile(file);
    for (const ids of lists)
      lines.push(`  {${cxx(name)}, "${ids.join(' ')}", ${cxx(await t.decode(ids, false))}, ${cxx(await t.decode(ids, true))}},`);
  }
  lines.push('};', '// clang-format on');
  console.log(lines.join('\n'));
  fs.rmSync(dir, { recursive: true });
})();
