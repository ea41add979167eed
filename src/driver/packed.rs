//! **A file's update list, packed** for the length of a run: every worker of a process reads its
//! slice of each epoch from one shared list, kept from the first epoch to the last, so its size
//! per update is what a long update file costs in memory.
//!
//! An [`Update`] is 40 bytes (two ids, an optional weight, a sign). Packed, an update is its two
//! ids as `u32`s when every id of the file fits in 32 bits (else as `u64`s), one bit for its
//! sign, and its weight's bits only when some update of the file has a weight other than the
//! default: 8 bytes and a bit for an unweighted file of 32-bit ids, 16 with 64-bit ids, 8 more
//! with weights. Reading an update back gives exactly the edge and diff the unpacked update
//! gives ([`Update::edge`] and its `diff`; tested below on random lists of every kind).

use crate::types::{weight_bits, Diff, Edge, Time, Update};

/// An update list packed as the module docs say; read with [`PackedUpdates::get`].
#[derive(Debug, Default)]
pub(super) struct PackedUpdates {
    /// The endpoints, when every id fits in 32 bits.
    narrow: Vec<[u32; 2]>,
    /// The endpoints otherwise.
    wide: Vec<[u64; 2]>,
    /// Each update's weight bits, when some weight is not the default's; else empty.
    weights: Vec<u64>,
    /// Bit `i`: update `i` deletes.
    deletes: Vec<u64>,
}

/// The endpoints `src`, `dst` as `u32`s, if both fit.
pub(super) fn narrow_ends(src: u64, dst: u64) -> Option<[u32; 2]> {
    Some([u32::try_from(src).ok()?, u32::try_from(dst).ok()?])
}

impl PackedUpdates {
    /// Packs `updates` (their lines are not kept).
    pub(super) fn pack(updates: &[(usize, Update)]) -> Self {
        let default = weight_bits(None);
        let narrow = updates.iter().all(|(_, u)| narrow_ends(u.src, u.dst).is_some());
        let weighted = updates.iter().any(|(_, u)| weight_bits(u.weight) != default);
        let mut packed = PackedUpdates::default();
        if narrow {
            // Every pair fits (checked above); mapped one to one, so the list is allocated once.
            packed.narrow = updates.iter().map(|(_, u)| narrow_ends(u.src, u.dst).unwrap_or_default()).collect();
        } else {
            packed.wide = updates.iter().map(|(_, u)| [u.src, u.dst]).collect();
        }
        if weighted {
            packed.weights = updates.iter().map(|(_, u)| weight_bits(u.weight)).collect();
        }
        packed.deletes = vec![0u64; updates.len().div_ceil(64)];
        for (i, (_, u)) in updates.iter().enumerate() {
            if u.diff < 0 {
                packed.deletes[i / 64] |= 1 << (i % 64);
            }
        }
        packed
    }

    /// Updates in the list.
    pub(super) fn len(&self) -> usize {
        self.narrow.len().max(self.wide.len())
    }

    /// Update `i` as the edge it changes and its diff (`+1` or `-1`).
    #[inline]
    pub(super) fn get(&self, i: usize) -> (Edge, Diff) {
        let (src, dst) = match self.narrow.get(i) {
            Some(&[s, d]) => (s as u64, d as u64),
            None => {
                let [s, d] = self.wide[i];
                (s, d)
            }
        };
        let weight = self.weights.get(i).copied().unwrap_or_else(|| weight_bits(None));
        let diff = if self.deletes[i / 64] >> (i % 64) & 1 == 1 { -1 } else { 1 };
        ((src, dst, weight), diff)
    }

    /// Heap bytes held.
    #[cfg(test)]
    fn heap_bytes(&self) -> usize {
        self.narrow.capacity() * 8
            + self.wide.capacity() * 16
            + self.weights.capacity() * 8
            + self.deletes.capacity() * 8
    }
}

/// A windowed file's event times, packed: each an offset from the earliest as a `u32` when
/// every one is within 2^32 of it (seconds over 136 years, milliseconds over 49 days), else
/// whole. Read with [`PackedTimes::range`].
#[derive(Debug)]
pub(super) enum PackedTimes {
    Narrow { base: Time, offsets: Vec<u32> },
    Wide(Vec<Time>),
}

impl Default for PackedTimes {
    fn default() -> Self {
        PackedTimes::Wide(Vec::new())
    }
}

impl PackedTimes {
    /// Packs `times`.
    pub(super) fn pack(times: &[Time]) -> Self {
        let base = times.iter().copied().min().unwrap_or(0);
        let narrow = times.iter().all(|&t| t - base <= u32::MAX as Time);
        match narrow {
            true => PackedTimes::Narrow { base, offsets: times.iter().map(|&t| (t - base) as u32).collect() },
            false => PackedTimes::Wide(times.to_vec()),
        }
    }

    /// The times of updates `range`, in order.
    pub(super) fn range(&self, range: std::ops::Range<usize>) -> impl Iterator<Item = Time> + '_ {
        range.map(|i| match self {
            PackedTimes::Narrow { base, offsets } => base + offsets[i] as Time,
            PackedTimes::Wide(times) => times[i],
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    /// Random updates: ids below `max_id`, a weight on about one in `weighted` (0: none), a
    /// deletion on about one in three.
    fn updates(seed: u64, n: usize, max_id: u64, weighted: u32) -> Vec<(usize, Update)> {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        (0..n)
            .map(|i| {
                let (s, d) = (rng.gen_range(0..=max_id), rng.gen_range(0..=max_id));
                let mut u = if rng.gen_range(0..3) == 0 { Update::delete(s, d) } else { Update::insert(s, d) };
                if weighted > 0 && rng.gen_range(0..weighted) == 0 {
                    u.weight = Some([0.0, -0.0, 2.5, 1.0, f64::MAX][rng.gen_range(0..5)]);
                }
                (i + 1, u)
            })
            .collect()
    }

    #[test]
    fn every_update_reads_back_as_the_edge_and_diff_it_is() {
        let cases = [
            (1u64, 1000usize, 50u64, 0u32),
            (2, 777, u32::MAX as u64, 0),
            (3, 129, u64::MAX, 0),
            (4, 500, 90, 7),
            (5, 64, u64::MAX, 2),
            (6, 0, 9, 0),
            (7, 65, 3, 1),
        ];
        for (seed, n, max_id, weighted) in cases {
            let list = updates(seed, n, max_id, weighted);
            let packed = PackedUpdates::pack(&list);
            assert_eq!(packed.len(), n, "seed {seed}");
            for (i, (_, u)) in list.iter().enumerate() {
                assert_eq!(packed.get(i), (u.edge(), u.diff as Diff), "seed {seed}: update {i} ({u:?})");
            }
        }
    }

    /// Random event times, near one another or far apart: every one reads back as it was, from
    /// any range; narrow (4 bytes each) when they are within 2^32 of the earliest.
    #[test]
    fn event_times_read_back_from_any_range() {
        for seed in 0..30u64 {
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
            let base = [0, 1 << 40, Time::MAX - (1 << 33)][rng.gen_range(0..3)];
            let spread = [10, u32::MAX as Time, 1 << 33][rng.gen_range(0..3)];
            let times: Vec<Time> = (0..rng.gen_range(0..300)).map(|_| base + rng.gen_range(0..=spread)).collect();
            let packed = PackedTimes::pack(&times);
            let narrow = times.iter().all(|&t| t - times.iter().min().unwrap() <= u32::MAX as Time);
            assert_eq!(matches!(packed, PackedTimes::Narrow { .. }), narrow, "seed {seed}");
            for _ in 0..20 {
                let a = rng.gen_range(0..=times.len());
                let b = rng.gen_range(a..=times.len());
                assert_eq!(packed.range(a..b).collect::<Vec<_>>(), times[a..b], "seed {seed}: {a}..{b}");
            }
        }
    }

    #[test]
    fn an_unweighted_file_of_small_ids_takes_about_eight_bytes_per_update() {
        let list = updates(8, 100_000, 1 << 20, 0);
        let packed = PackedUpdates::pack(&list);
        let per_update = packed.heap_bytes() as f64 / list.len() as f64;
        assert!(per_update < 8.2, "{per_update} bytes per update");
        // Weighted, or with ids past 32 bits, it takes more, never the unpacked 40.
        let weighted = PackedUpdates::pack(&updates(9, 100_000, 1 << 20, 4));
        let wide = PackedUpdates::pack(&updates(10, 100_000, u64::MAX, 0));
        assert!(weighted.heap_bytes() / 100_000 <= 16 && wide.heap_bytes() / 100_000 <= 16);
    }
}
