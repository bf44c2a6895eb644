//! A tiny seeded PRNG (SplitMix64) and stable string hashing, so the synthetic cluster is the same on every run.

/// SplitMix64: small, fast, and good enough to pick replica counts and nodes.
#[derive(Debug, Clone)]
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Self {
        Self(seed)
    }

    /// A generator for one named part of the cluster, independent of how many other parts exist.
    pub(crate) fn derive(seed: u64, name: &str) -> Self {
        Self(seed ^ fnv1a(name.as_bytes(), 0))
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `lo..=hi` (bias is irrelevant at these sizes).
    pub(crate) fn range(&mut self, lo: usize, hi: usize) -> usize {
        let span = (hi - lo + 1) as u64;
        lo + (self.next_u64() % span) as usize
    }

    /// True with probability `percent`/100.
    pub(crate) fn chance(&mut self, percent: u64) -> bool {
        self.next_u64() % 100 < percent
    }

    pub(crate) fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.next_u64() as usize % items.len()]
    }
}

/// FNV-1a over `bytes`, starting from the standard offset basis mixed with `salt`.
pub(crate) fn fnv1a(bytes: &[u8], salt: u64) -> u64 {
    let mut hash = 0xcbf2_9ce4_8422_2325_u64 ^ salt;
    for byte in bytes {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}

/// A UUID-shaped identifier derived from `key` alone, so it does not depend on generation order.
pub(crate) fn uid(key: &str) -> String {
    let mut a = Rng::new(fnv1a(key.as_bytes(), 0x5eed));
    let hi = a.next_u64();
    let lo = a.next_u64();
    format!(
        "{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}",
        hi >> 32,
        (hi >> 16) & 0xffff,
        hi & 0x0fff,
        0x8000 | (lo >> 48) & 0x3fff,
        lo & 0xffff_ffff_ffff
    )
}

/// A Kubernetes-style random suffix (the alphabet the API server uses for generated names).
pub(crate) fn suffix(key: &str, len: usize) -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let mut rng = Rng::new(fnv1a(key.as_bytes(), 0x0a11));
    (0..len).map(|_| char::from(*rng.pick(ALPHABET))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_gives_same_sequence() {
        let mut a = Rng::new(7);
        let mut b = Rng::new(7);
        assert_eq!((0..5).map(|_| a.next_u64()).collect::<Vec<_>>(), (0..5).map(|_| b.next_u64()).collect::<Vec<_>>());
    }

    #[test]
    fn uid_is_uuid_shaped_and_stable() {
        let id = uid("pods/default/web-1");
        assert_eq!(id.len(), 36);
        assert_eq!(id, uid("pods/default/web-1"));
        assert_ne!(id, uid("pods/default/web-2"));
    }

    #[test]
    fn range_stays_in_bounds() {
        let mut rng = Rng::new(1);
        assert!((0..1000).map(|_| rng.range(2, 4)).all(|n| (2..=4).contains(&n)));
    }
}
