//! **Deletion claims**: which deletions of the open epoch are valid, with several producers
//! filling that epoch at once.
//!
//! A deletion may consume
//!
//! * a copy present in the multiset as of the last closed epoch that no other pending deletion
//!   of this epoch has claimed yet, or
//! * a copy the *same producer* inserted earlier in this epoch (and has not deleted again).
//!
//! Copies inserted by another producer in the same, still open epoch do not count: that
//! producer's pending updates may still be discarded (a rejected line, a disconnect), and what is
//! left must stay valid. With one producer this is exactly "the multiset plus this epoch's
//! earlier updates". A deletion with nothing to consume is rejected with the reason `cannot
//! delete edge S D[ W]: no copy of it is present`.
//!
//! [`Claims`] keeps, per producer, its own insertions and the multiset copies its deletions
//! consumed, and the total claimed per edge; [`Claims::release`] gives a producer's claims back
//! when its pending updates are discarded, and [`Claims::clear`] forgets everything when the
//! epoch closes.

use std::collections::HashMap;
use std::hash::Hash;

use super::multiset::Multiset;
use super::transport::ConnId;
use crate::types::{Edge, Update};

/// A producer's share of the open epoch, for validating its deletions.
struct Producer<K> {
    /// Copies it inserted in this epoch and has not deleted again.
    inserted: HashMap<K, u64>,
    /// Copies of the multiset its deletions consumed.
    claims: HashMap<K, u64>,
}

impl<K> Default for Producer<K> {
    fn default() -> Self {
        Producer { inserted: HashMap::new(), claims: HashMap::new() }
    }
}

/// The claims of the open epoch's pending updates on the multiset: of edges (`K = Edge`), or of
/// the records of the run's record input (`K = String`), under the same rules.
pub(super) struct Claims<K = Edge> {
    producers: HashMap<ConnId, Producer<K>>,
    /// Copies of the multiset claimed by pending deletions (all producers).
    claimed: HashMap<K, u64>,
}

impl<K> Default for Claims<K> {
    fn default() -> Self {
        Claims { producers: HashMap::new(), claimed: HashMap::new() }
    }
}

impl Claims<Edge> {
    /// Records `conn`'s `update` as pending; the reason if it is a deletion with no copy to
    /// consume (then nothing is recorded for it).
    pub(super) fn admit(&mut self, conn: ConnId, update: &Update, edges: &Multiset) -> Result<(), String> {
        let edge = update.edge();
        let present = || edges.get(&edge).copied().unwrap_or(0);
        if self.claim(conn, &edge, update.diff > 0, present) {
            return Ok(());
        }
        let weight = update.weight.map(|w| format!(" {w}")).unwrap_or_default();
        Err(format!("cannot delete edge {} {}{weight}: no copy of it is present", update.src, update.dst))
    }
}

impl<K: Hash + Eq + Clone> Claims<K> {
    /// Records `conn`'s insertion (`insert`) or deletion of one copy of `key`, of which
    /// `present()` copies are in the multiset; `false` for a deletion with no copy to consume
    /// (then nothing is recorded for it).
    pub(super) fn claim(&mut self, conn: ConnId, key: &K, insert: bool, present: impl FnOnce() -> u64) -> bool {
        let producer = self.producers.entry(conn).or_default();
        if insert {
            *producer.inserted.entry(key.clone()).or_insert(0) += 1;
        } else if let Some(own) = producer.inserted.get_mut(key).filter(|n| **n > 0) {
            *own -= 1;
        } else {
            let present = present();
            let claimed = self.claimed.entry(key.clone()).or_insert(0);
            if *claimed >= present {
                return false;
            }
            *claimed += 1;
            *producer.claims.entry(key.clone()).or_insert(0) += 1;
        }
        true
    }

    /// Gives `conn`'s claims back; whether it had any pending share of the epoch.
    pub(super) fn release(&mut self, conn: ConnId) -> bool {
        let Some(producer) = self.producers.remove(&conn) else {
            return false;
        };
        for (key, n) in producer.claims {
            if let Some(claimed) = self.claimed.get_mut(&key) {
                *claimed -= n;
            }
        }
        true
    }

    /// The epoch closed: no pending updates remain.
    pub(super) fn clear(&mut self) {
        self.producers.clear();
        self.claimed.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deletions_consume_present_or_own_copies_only() {
        let mut edges = Multiset::new();
        edges.insert(Update::insert(1, 2).edge(), 1);
        let mut claims = Claims::default();
        claims.admit(1, &Update::delete(1, 2), &edges).unwrap();
        let err = claims.admit(2, &Update::delete(1, 2), &edges).unwrap_err();
        assert_eq!(err, "cannot delete edge 1 2: no copy of it is present");
        // Another producer's pending insertion does not count; one's own does.
        claims.admit(1, &Update::insert(3, 4), &edges).unwrap();
        assert!(claims.admit(2, &Update::delete(3, 4), &edges).is_err());
        claims.admit(1, &Update::delete(3, 4), &edges).unwrap();
        // Releasing producer 1 gives its claim on 1 2 back.
        assert!(claims.release(1));
        assert!(!claims.release(1));
        claims.admit(2, &Update::delete(1, 2), &edges).unwrap();
        claims.clear();
        claims.admit(3, &Update::delete(1, 2), &edges).unwrap();
    }

    #[test]
    fn records_follow_the_same_rules() {
        let mut claims: Claims<String> = Claims::default();
        let a = "a".to_string();
        assert!(claims.claim(1, &a, false, || 1));
        assert!(!claims.claim(2, &a, false, || 1), "the one copy is claimed");
        assert!(claims.claim(2, &a, true, || 1) && claims.claim(2, &a, false, || 1), "its own copy");
        assert!(claims.release(1));
        assert!(claims.claim(3, &a, false, || 1));
    }
}
