# An independent reference for `rgate gold verify-sample`'s draw (issue 40),
# written from the specifications, not from rgate's code:
# - rand_core's seed_from_u64: PCG32 (O'Neill 2014) fills the 32-byte key,
#   4 bytes per step (MUL 6364136223846793005, INC 11634580027462260723,
#   output xorshift-high then rotate);
# - ChaCha (Bernstein 2008) with 8 rounds, 64-bit block counter in words
#   12-13 and the stream number in words 14-15, words output in order;
# - Lemire's multiply-and-reject for an index below n;
# - the first k of a Fisher-Yates shuffle of the stratum's ids sorted by bytes.
# The ChaCha core is checked against the `cryptography` package's ChaCha20.
import struct, sys

M = 0xFFFFFFFF

def pcg_key(seed):
    mul, inc = 6364136223846793005, 11634580027462260723
    state, out = seed, b""
    for _ in range(8):
        state = (state * mul + inc) % 2**64
        xs = (((state >> 18) ^ state) >> 27) & M
        rot = state >> 59
        x = ((xs >> rot) | (xs << ((32 - rot) % 32))) & M
        out += struct.pack("<I", x)
    return out

def rotl(x, n):
    return ((x << n) | (x >> (32 - n))) & M

def block(key, counter, stream, rounds):
    s = [0x61707865, 0x3320646E, 0x79622D32, 0x6B206574]
    s += list(struct.unpack("<8I", key))
    s += [counter & M, counter >> 32, stream & M, stream >> 32]
    x = s[:]
    def qr(a, b, c, d):
        x[a] = (x[a] + x[b]) & M; x[d] = rotl(x[d] ^ x[a], 16)
        x[c] = (x[c] + x[d]) & M; x[b] = rotl(x[b] ^ x[c], 12)
        x[a] = (x[a] + x[b]) & M; x[d] = rotl(x[d] ^ x[a], 8)
        x[c] = (x[c] + x[d]) & M; x[b] = rotl(x[b] ^ x[c], 7)
    for _ in range(rounds // 2):
        qr(0, 4, 8, 12); qr(1, 5, 9, 13); qr(2, 6, 10, 14); qr(3, 7, 11, 15)
        qr(0, 5, 10, 15); qr(1, 6, 11, 12); qr(2, 7, 8, 13); qr(3, 4, 9, 14)
    return [(a + b) & M for a, b in zip(x, s)]

class Rng:
    def __init__(self, seed, stream):
        self.key, self.stream, self.counter, self.buf = pcg_key(seed), stream, 0, []
    def next_u32(self):
        if not self.buf:
            self.buf = block(self.key, self.counter, self.stream, 8)
            self.counter += 1
        return self.buf.pop(0)

def below(rng, n):
    zone = M - ((-n) % 2**32) % n
    while True:
        wide = rng.next_u32() * n
        if wide & M <= zone:
            return wide >> 32

def draw(strata, k, seed):
    """strata: {name: [model-graded ids]} -> drawn ids, strata by name."""
    out = []
    for rank, name in enumerate(sorted(strata, key=lambda s: s.encode())):
        pool = sorted(strata[name], key=lambda s: s.encode())
        rng = Rng(seed, rank)
        kk = min(k, len(pool))
        for i in range(kk):
            j = i + below(rng, len(pool) - i)
            pool[i], pool[j] = pool[j], pool[i]
        out += sorted(pool[:kk], key=lambda s: s.encode())
    return out

def check_core():
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms
    key = bytes(range(32))
    ks = Cipher(algorithms.ChaCha20(key, bytes(16)), mode=None).encryptor().update(bytes(128))
    mine = b"".join(struct.pack("<16I", *block(key, c, 0, 20)) for c in range(2))
    assert ks == mine, "the ChaCha core disagrees with cryptography's ChaCha20"

if __name__ == "__main__":
    check_core()
    strata = {"a": [f"a{i:02}" for i in range(25)], "b": [f"b{i:02}" for i in range(12)]}
    print(draw(strata, 5, 42))
    print(draw(strata, 5, 43))
