//! Query lookup by id: the open-addressing [`QueryIndex`], the id hash, and
//! the inline byte comparisons the readers and the run parsers share.

use std::collections::HashMap;

use super::GoldQuery;

/// Query ids to positions, for the ungrouped-qrels reader's borrowed ids.
/// SipHash's DoS resistance (pointless for the user's own files) costs
/// more than the rest of a lookup.
pub(super) type IdMap<'t, V> = HashMap<&'t str, V, std::hash::BuildHasherDefault<IdHasher>>;

/// [`IdHasher`] over an id's bytes.
#[inline]
pub(super) fn id_hash(id: &[u8]) -> u64 {
    use std::hash::Hasher;
    let mut h = IdHasher::default();
    h.write(id);
    h.finish()
}

/// Query ids to positions in [`GoldSet::queries`]: an open-addressing
/// table of (position + 1, low 32 bits of the id's hash), the id itself
/// read from the query. The run readers look a query up at every change of
/// query id and the qrels reader at every new query: 70,000 of each for a
/// 70k-query gold set. Keyed by the queries' own ids, it costs no String
/// per query (a `HashMap<String, u32>` did: a second copy of every id).
#[derive(Debug, Clone, Default)]
pub(super) struct QueryIndex {
    /// A power of two long (or empty); (0, _) marks a free slot.
    slots: Vec<(u32, u32)>,
    len: usize,
}

impl QueryIndex {
    /// Room for `n` ids before the table grows.
    pub(super) fn with_capacity(n: usize) -> QueryIndex {
        let mut t = QueryIndex::default();
        t.grow_to(n);
        t
    }

    pub(super) fn grow_to(&mut self, n: usize) {
        // At most 7/8 full.
        let size = (n + n / 7 + 1).next_power_of_two().max(8);
        if size <= self.slots.len() {
            return;
        }
        let old = std::mem::replace(&mut self.slots, vec![(0, 0); size]);
        let mask = size - 1;
        for (pos, tag) in old.into_iter().filter(|&(p, _)| p != 0) {
            let mut slot = tag as usize & mask;
            while self.slots[slot].0 != 0 {
                slot = (slot + 1) & mask;
            }
            self.slots[slot] = (pos, tag);
        }
    }

    /// The position of `id`, or the free slot where it would go.
    #[inline]
    pub(super) fn find(&self, queries: &[GoldQuery], id: &[u8], hash: u64) -> Result<u32, usize> {
        if self.slots.is_empty() {
            return Err(0);
        }
        let mask = self.slots.len() - 1;
        let tag = hash as u32;
        let mut slot = tag as usize & mask;
        loop {
            let (pos, t) = self.slots[slot];
            if pos == 0 {
                return Err(slot);
            }
            if t == tag
                && queries
                    .get(pos as usize - 1)
                    .is_some_and(|q| same_id(q.id.as_bytes(), id))
            {
                return Ok(pos - 1);
            }
            slot = (slot + 1) & mask;
        }
    }

    pub(super) fn get(&self, queries: &[GoldQuery], id: &[u8]) -> Option<usize> {
        self.find(queries, id, id_hash(id)).ok().map(|p| p as usize)
    }

    /// Records that `queries[pos]` has the id hashed to `hash`, which
    /// [`QueryIndex::find`] did not find (at `slot`).
    pub(super) fn insert(&mut self, mut slot: usize, hash: u64, pos: u32) {
        let tag = hash as u32;
        if (self.len + 1) * 8 > self.slots.len() * 7 {
            self.grow_to((self.len + 1) * 2);
            let mask = self.slots.len() - 1;
            slot = tag as usize & mask;
            while self.slots[slot].0 != 0 {
                slot = (slot + 1) & mask;
            }
        }
        self.slots[slot] = (pos + 1, tag);
        self.len += 1;
    }
}

/// Eight bytes at a time, multiplied and rotated, then a murmur3 finaliser
/// so that every output bit (hashbrown reads the top seven) depends on
/// every input byte.
#[derive(Default, Clone, Copy)]
pub(super) struct IdHasher(u64);

impl std::hash::Hasher for IdHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut h = self.0 ^ bytes.len() as u64;
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            h = (h ^ word8(c, 0))
                .wrapping_mul(0x9e37_79b9_7f4a_7c15)
                .rotate_left(29);
        }
        h = (h ^ short_word(chunks.remainder())).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        self.0 = h;
    }

    #[inline]
    fn finish(&self) -> u64 {
        let mut h = self.0;
        h ^= h >> 33;
        h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
        h ^= h >> 33;
        h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        h ^ (h >> 33)
    }
}

/// [`str::lines`] with the newlines found by memchr: `lines` searches
/// for them a character at a time, which was a tenth of loading 500,000
/// qrels lines.
pub(super) fn lines(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        // As `lines`: a `\r` goes only with the `\n` after it.
        let line = match memchr::memchr(b'\n', rest.as_bytes()) {
            Some(p) => {
                let line = &rest[..p];
                rest = &rest[p + 1..];
                line.strip_suffix('\r').unwrap_or(line)
            }
            None => std::mem::take(&mut rest),
        };
        Some(line)
    })
}

/// Byte equality of two ids, inline: `==` on slices calls memcmp, whose
/// call costs more than comparing a short id, and the readers compare ids
/// at every line (the query id of a run line with the one before, a
/// judgment with the query's others). Up to 16 bytes: two overlapping loads.
#[inline]
pub(crate) fn same_id(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    match n {
        0 => true,
        1..=3 => a[0] == b[0] && a[n / 2] == b[n / 2] && a[n - 1] == b[n - 1],
        4..=7 => word4(a, 0) == word4(b, 0) && word4(a, n - 4) == word4(b, n - 4),
        8..=16 => word8(a, 0) == word8(b, 0) && word8(a, n - 8) == word8(b, n - 8),
        _ => a == b,
    }
}

#[inline(always)]
fn word4(s: &[u8], at: usize) -> u32 {
    let mut w = [0u8; 4];
    w.copy_from_slice(&s[at..at + 4]);
    u32::from_le_bytes(w)
}

#[inline(always)]
fn word8(s: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&s[at..at + 8]);
    u64::from_le_bytes(w)
}

/// Up to 8 bytes as one word, every byte counted (the length is hashed
/// separately): two overlapping loads, or for 1-3 bytes the first, middle
/// and last.
#[inline(always)]
pub(crate) fn short_word(t: &[u8]) -> u64 {
    let n = t.len();
    match n {
        0 => 0,
        1..=3 => u64::from(t[0]) | u64::from(t[n / 2]) << 8 | u64::from(t[n - 1]) << 16,
        4..=7 => u64::from(word4(t, 0)) | u64::from(word4(t, n - 4)) << 32,
        _ => word8(t, 0),
    }
}

/// The first 8 bytes of `id`, zero-padded, as a big-endian number: numbers
/// compare as the bytes do, up to ids that differ only past the 8th byte
/// or by trailing zero bytes.
#[inline]
pub(super) fn id_prefix(id: &[u8]) -> u64 {
    let mut w = [0u8; 8];
    let n = id.len().min(8);
    w[..n].copy_from_slice(&id[..n]);
    u64::from_be_bytes(w)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_split_as_str_lines_does() {
        for text in [
            "",
            "\n",
            "a",
            "a\n",
            "a\r\nb",
            "a\n\nb\n",
            "\r\n",
            "a\rb\n",
            "é\nü\r\n\r",
        ] {
            assert_eq!(
                lines(text).collect::<Vec<_>>(),
                text.lines().collect::<Vec<_>>(),
                "{text:?}"
            );
        }
    }

    #[test]
    fn same_id_is_byte_equality() {
        for len in 0..20usize {
            let a: Vec<u8> = (0..len as u8).map(|i| b'a' + i).collect();
            assert!(same_id(&a, &a.clone()), "len {len}");
            for i in 0..len {
                let mut b = a.clone();
                b[i] ^= 1;
                assert!(!same_id(&a, &b), "len {len}, byte {i}");
            }
            let mut longer = a.clone();
            longer.push(0);
            assert!(!same_id(&a, &longer), "a zero byte more is another id");
        }
    }
}
