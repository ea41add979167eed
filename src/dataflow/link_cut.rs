//! A link-cut forest (Sleator–Tarjan) over dense node indices, with a path minimum: each node
//! holds a key, and [`LinkCut::path_min`] returns the node of smallest key on the tree path
//! between two nodes. Every operation is O(log n) amortised.
//!
//! Used by the windowed WCC fast path, where edges are nodes too (keyed by the time they leave
//! the window) and vertices have the key `u64::MAX`, so that the path minimum is the
//! earliest-leaving edge on the path.
//!
//! ```
//! use ripples::dataflow::link_cut::LinkCut;
//! let mut lc = LinkCut::new();
//! // A path a - e1 - b - e2 - c, where the edges are nodes keyed by when they leave.
//! let [a, b, c] = [lc.add(u64::MAX), lc.add(u64::MAX), lc.add(u64::MAX)];
//! let (e1, e2) = (lc.add(30), lc.add(10));
//! lc.link(a, e1);
//! lc.link(e1, b);
//! lc.link(b, e2);
//! lc.link(e2, c);
//! assert!(lc.connected(a, c));
//! // The earliest-leaving edge between a and c is e2 (key 10).
//! assert_eq!(lc.path_min(a, c), e2);
//! let first = lc.path_min(a, b);
//! assert_eq!(lc.key(first), 30);
//! // Cutting it splits the tree.
//! lc.cut(b, e2);
//! assert!(!lc.connected(a, c) && lc.connected(a, b));
//! ```

/// Node keys are `(key, node)` pairs, so that ties are broken by index.
#[derive(Clone, Debug)]
pub struct LinkCut {
    left: Vec<u32>,
    right: Vec<u32>,
    parent: Vec<u32>,
    flip: Vec<bool>,
    key: Vec<u64>,
    /// The node of smallest `(key, index)` in the splay subtree.
    min: Vec<u32>,
    /// Scratch for [`LinkCut::splay`].
    stack: Vec<u32>,
}

const NIL: u32 = u32::MAX;

impl Default for LinkCut {
    fn default() -> Self {
        Self::new()
    }
}

impl LinkCut {
    /// An empty forest.
    pub fn new() -> Self {
        LinkCut {
            left: Vec::new(),
            right: Vec::new(),
            parent: Vec::new(),
            flip: Vec::new(),
            key: Vec::new(),
            min: Vec::new(),
            stack: Vec::new(),
        }
    }

    /// Adds an isolated node with `key`; returns its index.
    pub fn add(&mut self, key: u64) -> usize {
        let i = self.key.len() as u32;
        self.left.push(NIL);
        self.right.push(NIL);
        self.parent.push(NIL);
        self.flip.push(false);
        self.key.push(key);
        self.min.push(i);
        i as usize
    }

    /// Re-keys an isolated node (one that is in no tree with other nodes), for reuse.
    pub fn reset(&mut self, i: usize, key: u64) {
        debug_assert!(self.left[i] == NIL && self.right[i] == NIL && self.parent[i] == NIL);
        self.key[i] = key;
        self.min[i] = i as u32;
        self.flip[i] = false;
    }

    /// The key of node `i` (as given to [`LinkCut::add`] or [`LinkCut::reset`]).
    pub fn key(&self, i: usize) -> u64 {
        self.key[i]
    }

    fn is_root(&self, x: u32) -> bool {
        let p = self.parent[x as usize];
        p == NIL || (self.left[p as usize] != x && self.right[p as usize] != x)
    }

    fn better(&self, a: u32, b: u32) -> u32 {
        if b == NIL || (a != NIL && (self.key[a as usize], a) < (self.key[b as usize], b)) {
            a
        } else {
            b
        }
    }

    fn update(&mut self, x: u32) {
        let (l, r) = (self.left[x as usize], self.right[x as usize]);
        let mut m = x;
        if l != NIL {
            m = self.better(self.min[l as usize], m);
        }
        if r != NIL {
            m = self.better(self.min[r as usize], m);
        }
        self.min[x as usize] = m;
    }

    fn push(&mut self, x: u32) {
        if self.flip[x as usize] {
            let x = x as usize;
            self.flip[x] = false;
            std::mem::swap(&mut self.left[x], &mut self.right[x]);
            for c in [self.left[x], self.right[x]] {
                if c != NIL {
                    self.flip[c as usize] ^= true;
                }
            }
        }
    }

    fn rotate(&mut self, x: u32) {
        let p = self.parent[x as usize];
        let g = self.parent[p as usize];
        let p_root = self.is_root(p);
        if self.left[p as usize] == x {
            let b = self.right[x as usize];
            self.left[p as usize] = b;
            if b != NIL {
                self.parent[b as usize] = p;
            }
            self.right[x as usize] = p;
        } else {
            let b = self.left[x as usize];
            self.right[p as usize] = b;
            if b != NIL {
                self.parent[b as usize] = p;
            }
            self.left[x as usize] = p;
        }
        self.parent[p as usize] = x;
        self.parent[x as usize] = g;
        if !p_root {
            if self.left[g as usize] == p {
                self.left[g as usize] = x;
            } else {
                self.right[g as usize] = x;
            }
        }
        self.update(p);
        self.update(x);
    }

    fn splay(&mut self, x: u32) {
        // Push pending flips from the splay root down to x.
        let mut stack = std::mem::take(&mut self.stack);
        stack.push(x);
        let mut y = x;
        while !self.is_root(y) {
            y = self.parent[y as usize];
            stack.push(y);
        }
        while let Some(z) = stack.pop() {
            self.push(z);
        }
        self.stack = stack;
        while !self.is_root(x) {
            let p = self.parent[x as usize];
            if !self.is_root(p) {
                let g = self.parent[p as usize];
                let zigzig = (self.left[g as usize] == p) == (self.left[p as usize] == x);
                if zigzig {
                    self.rotate(p);
                } else {
                    self.rotate(x);
                }
            }
            self.rotate(x);
        }
    }

    /// Makes the path from the tree root to `x` preferred; `x` ends as the root of its splay tree
    /// with no right child.
    fn access(&mut self, x: u32) {
        let mut last = NIL;
        let mut y = x;
        while y != NIL {
            self.splay(y);
            self.right[y as usize] = last;
            self.update(y);
            last = y;
            y = self.parent[y as usize];
        }
        self.splay(x);
    }

    fn make_root(&mut self, x: u32) {
        self.access(x);
        self.flip[x as usize] ^= true;
        self.push(x);
    }

    fn find_root(&mut self, x: u32) -> u32 {
        self.access(x);
        let mut y = x;
        loop {
            self.push(y);
            let l = self.left[y as usize];
            if l == NIL {
                break;
            }
            y = l;
        }
        self.splay(y);
        y
    }

    /// Whether `a` and `b` are in one tree.
    pub fn connected(&mut self, a: usize, b: usize) -> bool {
        a == b || self.find_root(a as u32) == self.find_root(b as u32)
    }

    /// Links the roots' trees of `a` and `b` with the tree edge `a - b` (they must be in
    /// different trees).
    pub fn link(&mut self, a: usize, b: usize) {
        self.make_root(a as u32);
        debug_assert!(self.find_root(b as u32) != a as u32, "link within one tree");
        self.make_root(a as u32);
        self.parent[a] = b as u32;
    }

    /// Removes the tree edge `a - b` (it must exist).
    pub fn cut(&mut self, a: usize, b: usize) {
        self.make_root(a as u32);
        self.access(b as u32);
        // Now b's splay tree is the path a..b, which is exactly [a, b]: a is b's left child.
        debug_assert_eq!(self.left[b], a as u32, "cut of a non-edge");
        self.left[b] = NIL;
        self.parent[a] = NIL;
        self.update(b as u32);
    }

    /// The node of smallest key (ties: smallest index) on the path from `a` to `b` (connected).
    pub fn path_min(&mut self, a: usize, b: usize) -> usize {
        self.make_root(a as u32);
        self.access(b as u32);
        self.min[b] as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// A plain forest: adjacency lists, paths by search.
    struct Naive {
        adj: Vec<Vec<usize>>,
    }

    impl Naive {
        fn path(&self, a: usize, b: usize) -> Option<Vec<usize>> {
            let mut prev = vec![usize::MAX; self.adj.len()];
            let mut stack = vec![a];
            prev[a] = a;
            while let Some(x) = stack.pop() {
                for &y in &self.adj[x] {
                    if prev[y] == usize::MAX {
                        prev[y] = x;
                        stack.push(y);
                    }
                }
            }
            if prev[b] == usize::MAX {
                return None;
            }
            let mut out = vec![b];
            let mut x = b;
            while x != a {
                x = prev[x];
                out.push(x);
            }
            Some(out)
        }
    }

    #[test]
    fn random_operations_match_a_plain_forest() {
        for seed in 0..20u64 {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let n = 40;
            let mut lc = LinkCut::new();
            let mut naive = Naive { adj: vec![Vec::new(); n] };
            let keys: Vec<u64> = (0..n).map(|_| rng.gen_range(0..30)).collect();
            for &k in &keys {
                lc.add(k);
            }
            let mut edges: Vec<(usize, usize)> = Vec::new();
            for step in 0..2000 {
                let (a, b) = (rng.gen_range(0..n), rng.gen_range(0..n));
                let path = naive.path(a, b);
                assert_eq!(lc.connected(a, b), path.is_some(), "seed {seed} step {step}: connected({a}, {b})");
                match path {
                    None => {
                        lc.link(a, b);
                        naive.adj[a].push(b);
                        naive.adj[b].push(a);
                        edges.push((a, b));
                    }
                    Some(p) => {
                        let want = p.iter().copied().min_by_key(|&x| (keys[x], x)).unwrap();
                        assert_eq!(lc.path_min(a, b), want, "seed {seed} step {step}: path_min({a}, {b})");
                        if !edges.is_empty() && rng.gen_bool(0.5) {
                            let (x, y) = edges.swap_remove(rng.gen_range(0..edges.len()));
                            if rng.gen_bool(0.5) {
                                lc.cut(x, y);
                            } else {
                                lc.cut(y, x);
                            }
                            naive.adj[x].retain(|&z| z != y);
                            naive.adj[y].retain(|&z| z != x);
                        }
                    }
                }
            }
        }
    }
}
