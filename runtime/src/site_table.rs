//! A writer's table of what it keeps per site (a packet template, a line
//! prefix), keyed by the site's address: open addressing with linear
//! probing, so that every site a thread uses keeps its entry and a lookup
//! that finds its site in the first slot costs a multiply, a load and a
//! compare.
//!
//! A direct-mapped cache of the same size would be a little cheaper per
//! hit, but two hot sites whose addresses hash to the same slot then take
//! the writer's slow path on every event, for good; with tens of woven
//! functions that happens in most programs. Here the table doubles while it
//! is more than half full, up to [`MAX_SLOTS`]; past that (a writer that
//! has seen more than 32,768 distinct sites) it is emptied and fills again
//! with the sites in use. At most half the slots are ever filled, so a
//! probe always ends at an empty slot.

/// Slots of a table at most. A table only grows with the distinct sites
/// its writer sees, so this costs memory only to programs with that many
/// hot functions (`-finstrument-functions` reaches thousands): 4 MiB of
/// the Perfetto writer's 64-byte entries (one table per thread), 6 MiB of
/// the JSON writer's 96-byte ones (one per writer). Once its table is
/// emptied, every site's next event takes the writer's slow path, so a
/// program whose hot sites outnumber half the slots would take it on
/// almost every event: 2,048 slots made 1,500 sites called in turn cost
/// 6 to 9 times as much per call.
pub(crate) const MAX_SLOTS: usize = 65_536;

/// Address 0 (no site) marks an empty slot.
pub(crate) struct SiteTable<V> {
    slots: Box<[(usize, V)]>,
    /// `slots.len() - 1`; the length is a power of two.
    mask: usize,
    /// Slots holding a site.
    filled: usize,
}

/// The slot where the probe for `addr` starts in a table of `mask + 1`
/// slots: the high half of a multiplicative hash, so that sites a fixed
/// stride apart spread.
#[inline(always)]
fn home(addr: usize, mask: usize) -> usize {
    ((addr as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 32) as usize & mask
}

/// A [`SiteTable`] borrowed for lookups.
#[derive(Clone, Copy)]
pub(crate) struct SiteView<'a, V> {
    slots: &'a [(usize, V)],
    mask: usize,
}

impl<'a, V> SiteView<'a, V> {
    /// The entry of the site at `addr` (non-zero), if the table has it.
    #[inline(always)]
    pub(crate) fn get(self, addr: usize) -> Option<&'a V> {
        let mut i = home(addr, self.mask);
        loop {
            // SAFETY: `i` is masked to the table's length, `mask + 1`.
            let (key, value) = unsafe { self.slots.get_unchecked(i) };
            if *key == addr {
                return Some(value);
            }
            if *key == 0 {
                return None;
            }
            i = (i + 1) & self.mask;
        }
    }
}

impl<V: Clone + Default> SiteTable<V> {
    /// An empty table of `slots` slots (a power of two, at most
    /// [`MAX_SLOTS`]).
    pub(crate) fn new(slots: usize) -> SiteTable<V> {
        let slots = slots.clamp(2, MAX_SLOTS).next_power_of_two();
        SiteTable {
            slots: vec![(0, V::default()); slots].into_boxed_slice(),
            mask: slots - 1,
            filled: 0,
        }
    }

    fn home(&self, addr: usize) -> usize {
        home(addr, self.mask)
    }

    /// The entry of the site at `addr` (non-zero), if the table has it.
    #[inline(always)]
    pub(crate) fn get(&self, addr: usize) -> Option<&V> {
        self.view().get(addr)
    }

    /// The table for lookups only, in two words a loop can keep in
    /// registers.
    #[inline(always)]
    pub(crate) fn view(&self) -> SiteView<'_, V> {
        SiteView {
            slots: &self.slots,
            mask: self.mask,
        }
    }

    /// Sets the entry of the site at `addr` (non-zero) to `value`.
    pub(crate) fn insert(&mut self, addr: usize, value: V) {
        debug_assert_ne!(addr, 0);
        if let Some(i) = self.find_slot(addr) {
            let slot = &mut self.slots[i];
            if slot.0 == 0 {
                if self.filled + 1 > self.slots.len() / 2 && self.slots.len() < MAX_SLOTS {
                    self.grow();
                    return self.insert(addr, value);
                }
                if self.filled + 1 > self.slots.len() / 2 {
                    // Half full at its largest: start again from the
                    // sites in use.
                    *self = SiteTable::new(MAX_SLOTS);
                    return self.insert(addr, value);
                }
                self.filled += 1;
            }
            self.slots[i] = (addr, value);
        }
    }

    /// The slot holding `addr`, or else the empty slot that ends its probe.
    fn find_slot(&self, addr: usize) -> Option<usize> {
        let mut i = self.home(addr);
        for _ in 0..self.slots.len() {
            let key = self.slots[i].0;
            if key == addr || key == 0 {
                return Some(i);
            }
            i = (i + 1) & self.mask;
        }
        None
    }

    fn grow(&mut self) {
        let old = std::mem::replace(self, SiteTable::new(self.slots.len() * 2));
        for (addr, value) in old.slots.into_vec() {
            if addr != 0 {
                self.insert(addr, value);
            }
        }
    }

    /// Sites in the table.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.slots.iter().filter(|(addr, _)| *addr != 0).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_site_keeps_its_entry_however_the_addresses_hash() {
        // Addresses 64 bytes apart, as site copies are, and a thousand of
        // them: more than the first table's slots, so it grows.
        let mut table = SiteTable::<u64>::new(64);
        let addrs: Vec<usize> = (1..=1000).map(|i| 0x7f00_0000_0000 + i * 64).collect();
        for (n, &addr) in addrs.iter().enumerate() {
            table.insert(addr, n as u64);
        }
        for (n, &addr) in addrs.iter().enumerate() {
            assert_eq!(table.get(addr), Some(&(n as u64)), "site {n}");
        }
        assert_eq!(table.get(0x1234_5678), None);
        assert_eq!(table.len(), 1000);
    }

    #[test]
    fn thirty_thousand_sites_all_keep_their_entries() {
        // As many hot functions as a large program traced through
        // `-finstrument-functions` has: no site's entry is lost to the
        // table being emptied.
        let mut table = SiteTable::<u64>::new(64);
        let n = 30_000;
        for i in 1..=n {
            table.insert(0x5500_0000_0000 + i * 48, i as u64);
        }
        assert_eq!(table.len(), n);
        for i in 1..=n {
            assert_eq!(
                table.get(0x5500_0000_0000 + i * 48),
                Some(&(i as u64)),
                "site {i}"
            );
        }
    }

    #[test]
    fn an_entry_set_again_is_replaced_not_added() {
        let mut table = SiteTable::<u64>::new(4);
        table.insert(0x1000, 1);
        table.insert(0x1000, 2);
        assert_eq!(table.get(0x1000), Some(&2));
        assert_eq!(table.len(), 1);
    }

    #[test]
    fn a_table_at_its_largest_stays_half_empty_and_takes_new_sites() {
        let mut table = SiteTable::<u64>::new(MAX_SLOTS);
        let n = MAX_SLOTS * 2;
        for i in 1..=n {
            table.insert(i * 16, i as u64);
        }
        // Never more than half full, so every probe ends.
        assert!(table.len() <= MAX_SLOTS / 2, "{} filled", table.len());
        // The most recent site is always found; any site found has its
        // own value.
        assert_eq!(table.get(n * 16), Some(&(n as u64)));
        for i in 1..=n {
            if let Some(&v) = table.get(i * 16) {
                assert_eq!(v, i as u64);
            }
        }
    }
}
