//! `MemoryLocations`: a set of alias-analysis element indices (a growable bitset), the unit in
//! which [`crate::alias_analysis::AliasDb`] answers "what memory may this value point to" and
//! "what does this node write".

/// A set of element indices.
#[derive(Clone, Default, PartialEq, Eq, Debug)]
pub struct MemoryLocations {
    words: Vec<u64>,
}

impl MemoryLocations {
    /// The empty set.
    pub fn new() -> MemoryLocations {
        MemoryLocations::default()
    }

    /// A set holding one index.
    pub fn single(i: usize) -> MemoryLocations {
        let mut m = MemoryLocations::new();
        m.set(i);
        m
    }

    /// Adds `i`.
    pub fn set(&mut self, i: usize) {
        let w = i / 64;
        if self.words.len() <= w {
            self.words.resize(w + 1, 0);
        }
        self.words[w] |= 1 << (i % 64);
    }

    /// Removes `i`.
    pub fn reset(&mut self, i: usize) {
        if let Some(w) = self.words.get_mut(i / 64) {
            *w &= !(1 << (i % 64));
        }
    }

    /// True when `i` is in the set.
    pub fn test(&self, i: usize) -> bool {
        self.words
            .get(i / 64)
            .is_some_and(|w| w & (1 << (i % 64)) != 0)
    }

    /// Adds every element of `other`.
    pub fn union_with(&mut self, other: &MemoryLocations) {
        if self.words.len() < other.words.len() {
            self.words.resize(other.words.len(), 0);
        }
        for (a, b) in self.words.iter_mut().zip(&other.words) {
            *a |= b;
        }
    }

    /// True when the sets share an element.
    pub fn intersects(&self, other: &MemoryLocations) -> bool {
        self.words.iter().zip(&other.words).any(|(a, b)| a & b != 0)
    }

    /// True when the set has no element.
    pub fn is_empty(&self) -> bool {
        self.words.iter().all(|&w| w == 0)
    }

    /// Removes every element.
    pub fn clear(&mut self) {
        self.words.clear();
    }

    /// The elements in increasing order.
    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.words.iter().enumerate().flat_map(|(wi, &w)| {
            (0..64)
                .filter(move |b| w & (1u64 << b) != 0)
                .map(move |b| wi * 64 + b)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_test_union_intersect() {
        let mut a = MemoryLocations::new();
        a.set(3);
        a.set(130);
        assert!(a.test(3) && a.test(130) && !a.test(4));
        let b = MemoryLocations::single(130);
        assert!(a.intersects(&b) && b.intersects(&a));
        let c = MemoryLocations::single(5);
        assert!(!a.intersects(&c));
        let mut d = c.clone();
        d.union_with(&a);
        assert_eq!(d.iter().collect::<Vec<_>>(), vec![3, 5, 130]);
        d.reset(5);
        assert!(!d.test(5));
        assert!(MemoryLocations::new().is_empty() && !d.is_empty());
    }
}
