//! The iteration order of a libstdc++ `std::unordered_map<std::string, T>` (default
//! constructed, keys inserted in a given order). PyTorch's SSA conversion walks such a map to
//! create loop-carried values, so reproducing its order reproduces PyTorch's graphs.

/// libstdc++'s `std::_Hash_bytes` (64-bit), with the seed `std::hash<std::string>` uses.
pub fn std_hash(s: &str) -> u64 {
    const MUL: u64 = (0xc6a4a793u64 << 32) + 0x5bd1e995;
    let shift_mix = |v: u64| v ^ (v >> 47);
    let buf = s.as_bytes();
    let len = buf.len();
    let mut hash: u64 = 0xc70f6907u64 ^ (len as u64).wrapping_mul(MUL);
    let aligned = len & !7;
    for chunk in buf[..aligned].chunks_exact(8) {
        let mut w = [0u8; 8];
        w.copy_from_slice(chunk);
        let data = shift_mix(u64::from_le_bytes(w).wrapping_mul(MUL)).wrapping_mul(MUL);
        hash ^= data;
        hash = hash.wrapping_mul(MUL);
    }
    let rest = len & 7;
    if rest != 0 {
        let mut data: u64 = 0;
        for i in (0..rest).rev() {
            data = (data << 8) + buf[aligned + i] as u64;
        }
        hash ^= data;
        hash = hash.wrapping_mul(MUL);
    }
    hash = shift_mix(hash).wrapping_mul(MUL);
    shift_mix(hash)
}

const PRIMES: &[u64] = &[
    2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71, 73, 79, 83, 89, 97,
    103, 109, 113, 127, 137, 139, 149, 157, 167, 179, 193, 199, 211, 227, 241, 257, 277, 293, 313,
    337, 359, 383, 409, 439, 467, 503, 541, 577, 619, 661, 709, 761, 823, 887, 953, 1031, 1109,
    1193, 1289, 1381, 1493, 1613, 1741, 1879, 2029, 2179, 2357, 2549,
];

/// `_Prime_rehash_policy::_M_next_bkt`: (bucket count, next resize threshold).
fn next_bkt(n: u64) -> (u64, u64) {
    const FAST: [u64; 14] = [2, 2, 2, 3, 5, 5, 7, 7, 11, 11, 11, 11, 13, 13];
    if n < 14 {
        if n == 0 {
            return (1, 0);
        }
        return (FAST[n as usize], FAST[n as usize]);
    }
    let p = PRIMES.iter().copied().find(|&p| p >= n).unwrap_or(n | 1);
    (p, p)
}

/// The order in which a default-constructed `unordered_map<string, T>` iterates `keys`
/// inserted in this order (duplicates ignored).
pub fn unordered_iteration_order(keys: &[String]) -> Vec<String> {
    // The singly linked list of nodes (indices into `nodes`), buckets point at the node before
    // their first node (`usize::MAX` = before-begin sentinel).
    let mut nodes: Vec<(String, u64)> = Vec::new();
    let mut next: Vec<Option<usize>> = Vec::new();
    let mut head: Option<usize> = None;
    let mut buckets: Vec<Option<usize>> = vec![None; 1];
    let mut bucket_count: u64 = 1;
    let mut next_resize: u64 = 0;
    const BEFORE: usize = usize::MAX;
    let bkt = |h: u64, n: u64| (h % n) as usize;
    for k in keys {
        if nodes.iter().any(|(x, _)| x == k) {
            continue;
        }
        let n_elt = nodes.len() as u64;
        // Rehash check (`_M_need_rehash` with one insertion).
        if n_elt + 1 > next_resize {
            let min_bkts = (n_elt + 1).max(if next_resize == 0 { 11 } else { 0 }) as f64;
            if min_bkts >= bucket_count as f64 {
                let (nb, nr) = next_bkt((min_bkts.floor() as u64 + 1).max(bucket_count * 2));
                next_resize = nr;
                // Rehash: re-insert the list in order.
                let mut new_buckets: Vec<Option<usize>> = vec![None; nb as usize];
                let mut p = head;
                head = None;
                let mut bbegin_bkt = 0usize;
                while let Some(i) = p {
                    let nx = next[i];
                    let b = bkt(nodes[i].1, nb);
                    match new_buckets[b] {
                        None => {
                            next[i] = head;
                            head = Some(i);
                            new_buckets[b] = Some(BEFORE);
                            if let Some(j) = next[i] {
                                let _ = j;
                                new_buckets[bbegin_bkt] = Some(i);
                            }
                            bbegin_bkt = b;
                        }
                        Some(prev) => {
                            let after = if prev == BEFORE { head } else { next[prev] };
                            next[i] = after;
                            if prev == BEFORE {
                                head = Some(i);
                            } else {
                                next[prev] = Some(i);
                            }
                        }
                    }
                    p = nx;
                }
                buckets = new_buckets;
                bucket_count = nb;
            } else {
                next_resize = (bucket_count as f64).floor() as u64;
            }
        }
        let h = std_hash(k);
        let i = nodes.len();
        nodes.push((k.clone(), h));
        next.push(None);
        let b = bkt(h, bucket_count);
        match buckets[b] {
            Some(prev) => {
                let after = if prev == BEFORE { head } else { next[prev] };
                next[i] = after;
                if prev == BEFORE {
                    head = Some(i);
                } else {
                    next[prev] = Some(i);
                }
            }
            None => {
                next[i] = head;
                head = Some(i);
                if let Some(j) = next[i] {
                    buckets[bkt(nodes[j].1, bucket_count)] = Some(i);
                }
                buckets[b] = Some(BEFORE);
            }
        }
    }
    let mut out = Vec::new();
    let mut p = head;
    while let Some(i) = p {
        out.push(nodes[i].0.clone());
        p = next[i];
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_is_libstdcxx() {
        // std::hash<std::string>{}("") and ("a") on x86-64 libstdc++ (g++ 12).
        assert_eq!(std_hash(""), 6142509188972423790);
        assert_eq!(std_hash("a"), 4993892634952068459);
        assert_eq!(std_hash("hello world 12"), 14959164404061115676);
    }

    #[test]
    fn iteration_order_is_libstdcxx() {
        // Printed by iterating a std::unordered_map<std::string, int> filled in this order,
        // compiled with g++ 12 (libstdc++).
        let keys = |s: &str| s.split(' ').map(String::from).collect::<Vec<_>>();
        assert_eq!(unordered_iteration_order(&keys("i s")), keys("s i"));
        let input = keys("a b c d e f g h i j k l m n o p q r s t u v w x y z first second third");
        let want = keys("second y x z w t v s r q o a b u p h n d k c third i f g first e j l m");
        assert_eq!(unordered_iteration_order(&input), want);
    }
}
