"""Writes the fuzzers' seed corpus (tests/fuzz/corpus/NAME/*): small valid inputs of each format
and a few near-misses. Run with any Python 3: python3 tests/fuzz/make_seeds.py"""
import gzip, hashlib, json, os, struct

HERE = os.path.dirname(os.path.abspath(__file__))


def put(target, name, data):
    d = os.path.join(HERE, 'corpus', target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), 'wb') as f:
        f.write(data)


def varint(n):
    out = b''
    while True:
        b = n & 0x7f
        n >>= 7
        out += bytes([b | (0x80 if n else 0)])
        if not n:
            return out


def field(num, wire, payload):
    tag = varint((num << 3) | wire)
    if wire == 0:
        return tag + varint(payload)
    return tag + varint(len(payload)) + payload


def frame(payload):
    return struct.pack('<I', len(payload)) + payload


def blob_part(kind, bid, total, offset, data):
    return frame(b'\x00' + struct.pack('<IQQQ', kind, bid, total, offset) + data)


# frames: Ping, Hello, Assign, Result, a blob in two parts, an oversized length, truncations
ping = field(12, 2, field(1, 0, 5))
hello = field(1, 2, field(1, 0, 1) + field(2, 2, b'0.1.0') + field(6, 2, b'worker') +
              field(7, 2, field(1, 2, b'cpu') + field(3, 2, b'CPU') + field(4, 0, 1 << 30)))
assign = field(7, 2, field(1, 0, 3) + field(2, 2, b''.join(varint(i) for i in (1, 5, 9))) + field(4, 0, 2))
result = field(8, 2, field(1, 0, 3) + field(2, 0, 3) + field(4, 0, 2) + field(6, 0, 4))
put('frames', 'ping', frame(ping))
put('frames', 'hello', frame(hello))
put('frames', 'assign-result', frame(assign) + frame(result))
put('frames', 'blob', blob_part(2, 4, 10, 0, b'01234') + blob_part(2, 4, 10, 5, b'56789') + frame(result))
put('frames', 'oversized', struct.pack('<I', 0x7fffffff) + b'x' * 16)
put('frames', 'truncated', frame(hello)[:-3])
put('frames', 'empty-envelope', frame(b''))
put('frames', 'bad-utf8', frame(field(1, 2, field(6, 2, b'\xff\xfe'))))

# announcements (frames and pairing messages are covered by the frames target)
dev = field(1, 2, b'cpu') + field(3, 2, b'AMD EPYC') + field(4, 0, 1 << 34) + field(6, 0, 2)
put('announcement', 'node', b'TDMA' + field(1, 0, 1) + field(2, 2, b'a' * 64) + field(3, 2, b'desk') +
    field(4, 2, b'Debian') + field(5, 2, b'0.1.0') + field(6, 2, dev) + field(7, 0, 47301))
put('announcement', 'query', b'TDMA' + field(2, 2, b'b' * 64) + field(8, 0, 1))
put('announcement', 'no-magic', b'XXXX' + field(2, 2, b'c' * 64))
put('frames', 'pairing', frame(field(15, 2, field(1, 2, b'\x01' * 32) + field(2, 2, b'lap'))) +
    frame(field(16, 2, field(1, 2, b'\x02' * 32))) + frame(field(17, 2, field(1, 2, b'\x03' * 32))) +
    frame(field(18, 2, field(1, 0, 1))))

# checkpoint container
def container(meta, tensors, blobs=()):
    directory, data, off = [], b'', 0
    for name, dtype, shape, raw in tensors:
        directory.append({'name': name, 'dtype': dtype, 'shape': shape, 'offset': off, 'nbytes': len(raw)})
        data += raw
        off += len(raw)
    bl = []
    for name, raw in blobs:
        bl.append({'name': name, 'offset': off, 'nbytes': len(raw)})
        data += raw
        off += len(raw)
    header = json.dumps({'meta': meta, 'tensors': directory, 'blobs': bl}, separators=(',', ':')).encode()
    body = b'TANDEMCK' + struct.pack('<IQ', 1, len(header)) + header + data
    return body + hashlib.sha256(body).digest()

w = struct.pack('<4f', 0.5, -1.0, 2.0, 0.25)
put('checkpoint', 'run', container({'kind': 'tandem-run', 'step': 3},
                                   [('param/fc.weight', 'F32', [2, 2], w), ('optim/step.0', 'I64', [], struct.pack('<q', 3))],
                                   [('model.torchscript', b'PK\x03\x04')]))
put('checkpoint', 'dataset', container({'kind': 'tandem-dataset', 'num_classes': 2, 'hash': '0' * 64},
                                       [('train.x', 'U8', [2, 1, 2, 2], bytes(range(8))), ('train.y', 'I64', [2], struct.pack('<2q', 0, 1)),
                                        ('test.x', 'U8', [1, 1, 2, 2], bytes(4)), ('test.y', 'I64', [1], struct.pack('<q', 1))]))
put('checkpoint', 'bad-digest', container({}, [])[:-1] + b'\x00')

# idx
imgs = b'\x00\x00\x08\x03' + struct.pack('>III', 2, 2, 2) + bytes(range(8))
labels = b'\x00\x00\x08\x01' + struct.pack('>I', 2) + b'\x01\x09'
put('idx', 'images', imgs)
put('idx', 'labels', labels)
put('idx', 'images.gz', gzip.compress(imgs, mtime=0))
put('idx', 'float-type', b'\x00\x00\x0d\x01' + struct.pack('>I', 1) + b'\x00' * 4)

# csv
put('csv', 'numeric', b'1,2,0\n3,4,1\n5,6,0\n')
put('csv', 'header-named', b'label,a,b\ncat,1,2\ndog,3,4\n')
put('csv', 'quoted', b'"a, b",1\n"x""y",2\n')
put('csv', 'ragged', b'1,2,3\n4,5\n')

# safetensors
header = json.dumps({'__metadata__': {'format': 'pt'}, 'w': {'dtype': 'F32', 'shape': [2, 2], 'data_offsets': [0, 16]}}).encode()
header += b' ' * (-len(header) % 8)
put('safetensors', 'small', struct.pack('<Q', len(header)) + header + w)
put('safetensors', 'past-end', struct.pack('<Q', 1 << 40) + b'{}')

# tls_accept: first packets of a connection to the TLS server. Real ClientHellos (TLS 1.2 and
# 1.3) made with Python's ssl module in memory, the 7-byte alert that once crashed the server,
# and things that are not TLS at all.
def client_hello(version):
    import ssl
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    ctx.minimum_version = ctx.maximum_version = version
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    conn = ctx.wrap_bio(incoming, outgoing)
    try:
        conn.do_handshake()
    except ssl.SSLWantReadError:
        pass
    return outgoing.read()

import ssl as _ssl
put('tls_accept', 'client-hello-tls12', client_hello(_ssl.TLSVersion.TLSv1_2))
put('tls_accept', 'client-hello-tls13', client_hello(_ssl.TLSVersion.TLSv1_3))
put('tls_accept', 'alert-7-bytes', bytes.fromhex('15030300020228'))
put('tls_accept', 'change-cipher-spec', bytes.fromhex('140303000101'))
put('tls_accept', 'application-data-first', bytes.fromhex('1703030010') + b'\x00' * 16)
put('tls_accept', 'record-header-only', bytes.fromhex('1603010200'))
put('tls_accept', 'http', b'GET / HTTP/1.1\r\nHost: x\r\n\r\n')
put('tls_accept', 'tandem-frame', frame(field(1, 0, 1)))
put('tls_accept', 'empty', b'')

# gguf: a small file with every value type the writer uses and a tensor of each block format
# (F32, F16, BF16, Q8_0, Q5_0, Q4_K), and near-misses.
def gguf_string(s):
    b = s.encode() if isinstance(s, str) else s
    return struct.pack('<Q', len(b)) + b


def gguf_file(meta, tensors, version=3):
    out = b'GGUF' + struct.pack('<IQQ', version, len(tensors), len(meta))
    for key, (vtype, payload) in meta:
        out += gguf_string(key) + struct.pack('<I', vtype) + payload
    offset, infos, data = 0, b'', b''
    for name, ne, gtype, raw in tensors:
        infos += gguf_string(name) + struct.pack('<I', len(ne)) + b''.join(struct.pack('<Q', d) for d in ne)
        infos += struct.pack('<IQ', gtype, offset)
        data += raw + b'\0' * (-len(raw) % 32)
        offset += len(raw) + (-len(raw) % 32)
    out += infos
    out += b'\0' * (-len(out) % 32)
    return out + data


gguf_meta = [('general.architecture', (8, gguf_string('llama'))),
             ('llama.block_count', (4, struct.pack('<I', 1))),
             ('llama.attention.layer_norm_rms_epsilon', (6, struct.pack('<f', 1e-5))),
             ('tokenizer.ggml.add_bos_token', (7, b'\x01')),
             ('tokenizer.ggml.tokens', (9, struct.pack('<IQ', 8, 2) + gguf_string('a') + gguf_string('b'))),
             ('tokenizer.ggml.token_type', (9, struct.pack('<IQ', 5, 2) + struct.pack('<ii', 1, 3)))]
gguf_tensors = [('f32', [4], 0, struct.pack('<4f', 1, -2, 3, 0.5)),
                ('f16', [32, 2], 1, bytes(range(128))),
                ('bf16', [32], 30, bytes(range(64))),
                ('q8_0', [32], 8, b'\x00\x3c' + bytes(range(32))),
                ('q5_0', [32], 6, b'\x00\x3c' + bytes(range(20))),
                ('q4_k', [256], 12, b'\x00\x3c\x00\x38' + bytes(range(140)))]
put('gguf', 'small', gguf_file(gguf_meta, gguf_tensors))
put('gguf', 'version-2', gguf_file(gguf_meta[:2], gguf_tensors[:1], version=2))
put('gguf', 'cut-short', gguf_file(gguf_meta[:1], gguf_tensors[:2])[:-1])
put('gguf', 'huge-count', b'GGUF' + struct.pack('<IQQ', 3, 1 << 40, 1 << 40))
put('gguf', 'empty', b'GGUF' + struct.pack('<IQQ', 3, 0, 0))

# basemanifest: a LoRA run's base as a run spec or a checkpoint describes it (the target hashes
# the input itself), and near-misses; frames: the run spec that carries one, and the base's
# request and part messages.


def manifest(total, part, digests=None, fmt='tandem-base-1'):
    n = (total + part - 1) // part
    if digests is None:
        digests = [hashlib.blake2b(bytes([i]), digest_size=32).hexdigest() for i in range(n)]
    return json.dumps({'format': fmt, 'part_bytes': part, 'parts': digests, 'total_bytes': total},
                      separators=(',', ':')).encode()


put('basemanifest', 'four-parts', manifest(200000, 65536))
put('basemanifest', 'one-part', manifest(8, 65536))
put('basemanifest', 'too-few-parts', manifest(200000, 65536, ['00' * 32]))
put('basemanifest', 'short-digest', manifest(70000, 65536, ['00' * 31, '11' * 32]))
put('basemanifest', 'small-parts', manifest(1000, 1000))
put('basemanifest', 'other-format', manifest(8, 65536, fmt='tandem-base-2'))
put('basemanifest', 'too-big', manifest(1 << 41, 64 << 20, []))
put('basemanifest', 'not-json', b'{"format":"tandem-base-1","parts":[')
four = manifest(200000, 65536)
run_spec = field(3, 2, field(1, 2, b'run-1') + field(3, 0, 1) + field(4, 2, b'ab' * 32) +
                 field(14, 2, four) + field(15, 2, hashlib.blake2b(four, digest_size=32).hexdigest().encode()))
put('frames', 'base-run-spec', frame(run_spec))
put('frames', 'base-request-part',
    frame(field(20, 2, field(1, 2, hashlib.blake2b(four, digest_size=32).hexdigest().encode()) + field(2, 0, 3))) +
    blob_part(5, 7, 10, 0, b'0123456789') + frame(field(21, 2, field(1, 0, 3) + field(2, 0, 7))))

# frames: a sharded run's messages (protocol 10): a link's join and welcome, a step's gradients
# and weights, the coordinator's setup (with its range's blob), reports, a close, a save and the
# state, then near-misses the decoder refuses (an unknown report kind, a close with a NaN rate and
# a negative weight, ranges with a gap)
def double(num, value):
    return varint((num << 3) | 1) + struct.pack('<d', value)


peer = lambda dev, host, port: field(1, 2, dev) + field(2, 2, host) + field(3, 0, port)
span = lambda b, e, owner: field(1, 0, b) + field(2, 0, e) + field(3, 2, owner)
members = field(3, 2, peer(b'a' * 64, b'', 47400)) + field(3, 2, peer(b'b' * 64, b'127.0.0.1', 47401))
setup = (field(1, 2, b'run-1') + field(2, 2, b'\x07' * 32) + members + field(4, 2, span(0, 2, b'a' * 64)) +
         field(4, 2, span(2, 4, b'b' * 64)) + field(5, 0, 3) + field(6, 0, 9))
put('frames', 'shard-link',
    frame(field(23, 2, field(1, 2, b'run-1') + field(2, 2, b'\x07' * 32))) + frame(field(24, 2, b'')) +
    blob_part(2, 4, 8, 0, struct.pack('<2f', 0.5, -1.0)) + frame(field(25, 2, field(1, 0, 3) + field(2, 0, 4))) +
    blob_part(2, 5, 8, 0, struct.pack('<2f', 0.25, 2.0)) + frame(field(26, 2, field(1, 0, 3) + field(2, 0, 5))))
put('frames', 'shard-setup', blob_part(2, 9, 8, 0, struct.pack('<2f', 0.5, 1.5)) + frame(field(27, 2, setup)))
count = lambda w, x: field(3, 2, field(1, 2, w) + double(2, x))
put('frames', 'shard-control',
    frame(field(28, 2, field(1, 0, 1))) +
    frame(field(28, 2, field(1, 0, 2) + field(2, 0, 3) + field(3, 2, b'b' * 64))) +
    frame(field(28, 2, field(1, 0, 4) + field(2, 0, 3) + field(5, 0, 5 << 30) + field(6, 0, 4 << 30))) +
    frame(field(29, 2, field(1, 0, 3) + double(2, 0.01) + count(b'a' * 64, 0.25) + count(b'b' * 64, 0.75))) +
    frame(field(30, 2, b'')) + blob_part(2, 6, 4, 0, b'\x00' * 4) +
    frame(field(31, 2, field(1, 0, 4) + field(2, 0, 6))))
put('frames', 'shard-refused',
    frame(field(28, 2, field(1, 0, 9) + field(2, 0, 3))) +
    frame(field(29, 2, field(1, 0, 3) + double(2, float('nan')) + count(b'a' * 64, -1.0))) +
    frame(field(27, 2, field(1, 2, b'run-1') + members + field(4, 2, span(0, 2, b'a' * 64)) +
                field(4, 2, span(3, 4, b'b' * 64)))))

# shardindex: an index, then each shard after a line "--shard FILE--"
def safetensors(tensors):
    h, data, off = {'__metadata__': {'format': 'pt'}}, b'', 0
    for name, dtype, shape, raw in tensors:
        h[name] = {'dtype': dtype, 'shape': shape, 'data_offsets': [off, off + len(raw)]}
        data += raw
        off += len(raw)
    header = json.dumps(h).encode()
    header += b' ' * (-len(header) % 8)
    return struct.pack('<Q', len(header)) + header + data


def sharded(weight_map, shards):
    out = json.dumps({'metadata': {'total_size': 32}, 'weight_map': weight_map}, indent=2).encode()
    for file, tensors in shards:
        out += b'\n--shard ' + file.encode() + b'--\n' + safetensors(tensors)
    return out

s1, s2 = 'model-00001-of-00002.safetensors', 'model-00002-of-00002.safetensors'
put('shardindex', 'two-shards', sharded({'a': s1, 'b': s2}, [(s1, [('a', 'F32', [2, 2], w)]), (s2, [('b', 'F32', [4], w)])]))
put('shardindex', 'misplaced', sharded({'a': s1, 'b': s2}, [(s1, [('a', 'F32', [2, 2], w), ('b', 'F32', [4], w)]), (s2, [])]))
put('shardindex', 'missing', sharded({'a': s1, 'b': s2}, [(s1, [('a', 'F32', [2, 2], w)])]))
put('shardindex', 'outside-folder', sharded({'a': '../model.safetensors'}, []))
put('shardindex', 'no-weight-map', b'{"metadata": {}}')

# chatdata: chat: lines (and the same bytes as jsonl:)
def chat(*messages, text=None):
    o = {'messages': [{'role': r, 'content': c} for r, c in messages]}
    if text is not None:
        o['text'] = text
    return json.dumps(o).encode() + b'\n'

conversation = chat(('system', 'Be brief.'), ('user', 'What colour is a plum?'), ('assistant', 'A plum is purple.'))
put('chatdata', 'conversations', conversation * 3 + chat(('user', 'And a lime?'), ('assistant', 'Green.'), ('user', 'Sure?'), ('assistant', 'Yes.'), text='lime'))
put('chatdata', 'unknown-role', chat(('tool', 'x')))
put('chatdata', 'not-an-object', b'[1, 2]\n' + conversation)
put('chatdata', 'text-lines', b'{"text": "Hello there. 0123"}\n{"text": "Bye."}\n\n{"text": ""}\n')
put('chatdata', 'no-content', b'{"messages": [{"role": "user"}]}\n')

# prefdata: preference pairs (prefs:), plain text and conversational, with near-misses
def pair(**o):
    return json.dumps(o).encode() + b'\n'

def msgs(*messages):
    return [{'role': r, 'content': c} for r, c in messages]

put('prefdata', 'text-pairs', pair(prompt='Colour of a plum?', chosen=' Purple.', rejected=' Green.') * 2 + b'\n' + pair(prompt='', chosen='Yes', rejected='No'))
put('prefdata', 'conversational', pair(prompt=msgs(('system', 'Be brief.'), ('user', 'A plum?')), chosen=msgs(('assistant', 'Purple.')), rejected=msgs(('assistant', 'Green.'))))
put('prefdata', 'implicit-prompt', pair(chosen=msgs(('user', 'A plum?'), ('assistant', 'Purple.')), rejected=msgs(('user', 'A plum?'), ('assistant', 'Green.'))))
put('prefdata', 'missing-rejected', pair(prompt='A plum?', chosen='Purple.'))
put('prefdata', 'empty-answer', pair(prompt='A plum?', chosen='', rejected='Green.'))
put('prefdata', 'too-long', pair(prompt='word ' * 40, chosen='Purple.', rejected='Green.'))
put('prefdata', 'mixed-forms', pair(prompt='A plum?', chosen=msgs(('assistant', 'Purple.')), rejected='Green.'))
put('prefdata', 'not-utf8', b'{"prompt": "\xff", "chosen": "a", "rejected": "b"}\n')

# modelarchive: a Hugging Face model archive without its closing SHA-256 (the target appends it)
def f32(n, scale=0.02):
    return struct.pack('<%df' % n, *[scale * ((i * 7919) % 13 - 6) for i in range(n)])


def archive(meta, tensors):
    return container(meta, tensors)[:-32]

llama = {'model_type': 'llama', 'architectures': ['LlamaForCausalLM'], 'vocab_size': 16, 'hidden_size': 8,
         'intermediate_size': 16, 'num_hidden_layers': 1, 'num_attention_heads': 2, 'num_key_value_heads': 1,
         'max_position_embeddings': 32, 'tie_word_embeddings': True, 'torch_dtype': 'float32'}
llama_tensors = [('model.embed_tokens.weight', [16, 8]), ('model.layers.0.input_layernorm.weight', [8]),
                 ('model.layers.0.self_attn.q_proj.weight', [8, 8]), ('model.layers.0.self_attn.k_proj.weight', [4, 8]),
                 ('model.layers.0.self_attn.v_proj.weight', [4, 8]), ('model.layers.0.self_attn.o_proj.weight', [8, 8]),
                 ('model.layers.0.post_attention_layernorm.weight', [8]), ('model.layers.0.mlp.gate_proj.weight', [16, 8]),
                 ('model.layers.0.mlp.up_proj.weight', [16, 8]), ('model.layers.0.mlp.down_proj.weight', [8, 16]),
                 ('model.norm.weight', [8])]
def numel(shape):
    n = 1
    for s in shape:
        n *= s
    return n

full = [(n, 'F32', s, f32(numel(s))) for n, s in llama_tensors]
put('modelarchive', 'llama', archive({'kind': 'tandem-hf-model', 'config': llama, 'checkpoint_activations': False}, full))
put('modelarchive', 'llama-layout', archive({'kind': 'tandem-hf-model', 'config': llama,
                                             'layout': [{'name': n, 'dtype': 'F32', 'shape': s} for n, s in llama_tensors]}, []))
lora = [('model.layers.0.self_attn.q_proj.lora_A.weight', 'F32', [2, 8], f32(16)),
        ('model.layers.0.self_attn.q_proj.lora_B.weight', 'F32', [8, 2], f32(16)),
        ('model.layers.0.self_attn.v_proj.lora_A.weight', 'F32', [2, 8], f32(16)),
        ('model.layers.0.self_attn.v_proj.lora_B.weight', 'F32', [4, 2], f32(8))]
put('modelarchive', 'llama-lora', archive({'kind': 'tandem-hf-model', 'config': llama,
                                           'lora': {'r': 2, 'base': 'bf16', 'alpha': 4, 'dropout': 0, 'targets': ['q_proj', 'v_proj']}},
                                          full + lora))
gpt2 = {'model_type': 'gpt2', 'architectures': ['GPT2LMHeadModel'], 'vocab_size': 16, 'n_embd': 8, 'n_layer': 1,
        'n_head': 2, 'n_inner': 16, 'n_positions': 32, 'torch_dtype': 'float32'}
gpt2_tensors = [('transformer.wte.weight', [16, 8]), ('transformer.wpe.weight', [32, 8]), ('transformer.h.0.ln_1.weight', [8]),
                ('transformer.h.0.ln_1.bias', [8]), ('transformer.h.0.attn.c_attn.weight', [8, 24]),
                ('transformer.h.0.attn.c_attn.bias', [24]), ('transformer.h.0.attn.c_proj.weight', [8, 8]),
                ('transformer.h.0.attn.c_proj.bias', [8]), ('transformer.h.0.ln_2.weight', [8]), ('transformer.h.0.ln_2.bias', [8]),
                ('transformer.h.0.mlp.c_fc.weight', [8, 16]), ('transformer.h.0.mlp.c_fc.bias', [16]),
                ('transformer.h.0.mlp.c_proj.weight', [16, 8]), ('transformer.h.0.mlp.c_proj.bias', [8]),
                ('transformer.ln_f.weight', [8]), ('transformer.ln_f.bias', [8])]
put('modelarchive', 'gpt2', archive({'kind': 'tandem-hf-model', 'config': gpt2},
                                    [(n, 'F32', s, f32(numel(s))) for n, s in gpt2_tensors]))
put('modelarchive', 'not-a-model', archive({'kind': 'tandem-run'}, []))
