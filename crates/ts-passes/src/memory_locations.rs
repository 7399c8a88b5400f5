//! `MemoryLocations`: a set of alias-analysis element indices, the unit in which
//! [`crate::alias_analysis::AliasDb`] answers "what memory may this value point to" and "what
//! does this node write".
//!
//! The set is sparse (the non-zero 64-bit words with their positions, as PyTorch's AliasDb uses
//! LLVM's `SparseBitVector`): most sets hold one or a few elements, and a dense bitset would
//! cost each element of a 100,000-node graph kilobytes — quadratic memory in the graph's size.

/// A set of element indices.
#[derive(Clone, Default, PartialEq, Eq, Debug)]
pub struct MemoryLocations {
    /// `(word index, bits)`, sorted by index; no word is zero.
    words: Vec<(usize, u64)>,
}

impl MemoryLocations {
    /// The empty set.
    pub fn new() -> MemoryLocations {
        MemoryLocations::default()
    }

    /// A set holding one index.
    pub fn single(i: usize) -> MemoryLocations {
        MemoryLocations {
            words: vec![(i / 64, 1 << (i % 64))],
        }
    }

    fn find(&self, w: usize) -> Result<usize, usize> {
        self.words.binary_search_by_key(&w, |&(k, _)| k)
    }

    /// Adds `i`.
    pub fn set(&mut self, i: usize) {
        let bit = 1u64 << (i % 64);
        match self.find(i / 64) {
            Ok(at) => self.words[at].1 |= bit,
            Err(at) => self.words.insert(at, (i / 64, bit)),
        }
    }

    /// Removes `i`.
    pub fn reset(&mut self, i: usize) {
        if let Ok(at) = self.find(i / 64) {
            self.words[at].1 &= !(1u64 << (i % 64));
            if self.words[at].1 == 0 {
                self.words.remove(at);
            }
        }
    }

    /// True when `i` is in the set.
    pub fn test(&self, i: usize) -> bool {
        self.find(i / 64)
            .is_ok_and(|at| self.words[at].1 & (1u64 << (i % 64)) != 0)
    }

    /// Adds every element of `other`.
    pub fn union_with(&mut self, other: &MemoryLocations) {
        if other.words.is_empty() {
            return;
        }
        if self.words.is_empty() {
            self.words = other.words.clone();
            return;
        }
        if let [(k, bits)] = other.words[..] {
            // One word (the common case): or it in place.
            match self.find(k) {
                Ok(at) => self.words[at].1 |= bits,
                Err(at) => self.words.insert(at, (k, bits)),
            }
            return;
        }
        let mut out = Vec::with_capacity(self.words.len() + other.words.len());
        let (mut a, mut b) = (self.words.iter().peekable(), other.words.iter().peekable());
        loop {
            match (a.peek(), b.peek()) {
                (Some(&&(ka, wa)), Some(&&(kb, wb))) => {
                    if ka == kb {
                        out.push((ka, wa | wb));
                        a.next();
                        b.next();
                    } else if ka < kb {
                        out.push((ka, wa));
                        a.next();
                    } else {
                        out.push((kb, wb));
                        b.next();
                    }
                }
                (Some(&&x), None) => {
                    out.push(x);
                    a.next();
                }
                (None, Some(&&y)) => {
                    out.push(y);
                    b.next();
                }
                (None, None) => break,
            }
        }
        self.words = out;
    }

    /// True when the sets share an element.
    pub fn intersects(&self, other: &MemoryLocations) -> bool {
        let (mut i, mut j) = (0, 0);
        while i < self.words.len() && j < other.words.len() {
            let ((ka, wa), (kb, wb)) = (self.words[i], other.words[j]);
            if ka == kb {
                if wa & wb != 0 {
                    return true;
                }
                i += 1;
                j += 1;
            } else if ka < kb {
                i += 1;
            } else {
                j += 1;
            }
        }
        false
    }

    /// True when the set has no element.
    pub fn is_empty(&self) -> bool {
        self.words.is_empty()
    }

    /// Removes every element.
    pub fn clear(&mut self) {
        self.words.clear();
    }

    /// The elements in increasing order.
    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.words.iter().flat_map(|&(wi, w)| {
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
        // Emptied words go away, so equal sets compare equal.
        let mut e = MemoryLocations::single(700);
        e.reset(700);
        assert_eq!(e, MemoryLocations::new());
        assert!(e.is_empty() && !e.intersects(&d));
        let mut f = MemoryLocations::single(64);
        f.union_with(&MemoryLocations::single(63));
        f.union_with(&MemoryLocations::single(6400));
        assert_eq!(f.iter().collect::<Vec<_>>(), vec![63, 64, 6400]);
        f.union_with(&MemoryLocations::single(65));
        assert_eq!(f.iter().collect::<Vec<_>>(), vec![63, 64, 65, 6400]);
        assert!(f.intersects(&MemoryLocations::single(6400)));
    }
}
