//! Large zero-initialised tables on huge pages where the system offers them.
//!
//! A search's transposition table is probed at random addresses spread over hundreds of
//! megabytes: with 4 KiB pages nearly every probe also misses the TLB. On Linux a table of
//! at least [`HUGE_PAGE`] bytes is its own anonymous mapping, aligned to 2 MiB and marked
//! `MADV_HUGEPAGE`, so that the kernel backs it with transparent huge pages when it can
//! (the default `madvise` mode of most distributions gives them only to regions that ask).
//! The mapping is zeroed by the kernel and its pages are mapped on first touch, so
//! allocating is nearly free. Only tables that a search fills densely ask for huge pages
//! ([`ZeroedTable::huge`]); the others ([`ZeroedTable::new`]), and every table elsewhere,
//! get the global allocator's zeroed allocation, also mapped lazily for large sizes.

use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;

/// Size of a transparent huge page on x86-64 and most aarch64 Linux systems; also the
/// smallest table that gets its own mapping.
pub const HUGE_PAGE: usize = 2 << 20;

/// Types for which the all-zero byte pattern is a valid value.
///
/// # Safety
/// Implement only for types whose every field is an integer, an atomic integer or an array
/// of those (no references, no `NonZero`, no enums without a zero discriminant).
pub unsafe trait ZeroValid: Sized {}

// SAFETY: integers and atomic integers are valid for every bit pattern, zero included.
unsafe impl ZeroValid for u8 {}
// SAFETY: as above.
unsafe impl ZeroValid for u16 {}
// SAFETY: as above.
unsafe impl ZeroValid for u32 {}
// SAFETY: as above.
unsafe impl ZeroValid for u64 {}
// SAFETY: `AtomicU64` has the same size and bit validity as `u64`.
unsafe impl ZeroValid for std::sync::atomic::AtomicU64 {}
// SAFETY: an array of zero-valid elements is zero-valid (no padding, no other bytes).
unsafe impl<T: ZeroValid, const N: usize> ZeroValid for [T; N] {}

/// Where a [`ZeroedTable`]'s memory came from, so that it is given back the same way.
enum Origin {
    /// The global allocator, with this layout.
    Heap(std::alloc::Layout),
    /// An anonymous mapping starting at `base` of `len` bytes (the table sits inside it,
    /// aligned to [`HUGE_PAGE`]).
    #[cfg(target_os = "linux")]
    Mapped { base: *mut u8, len: usize },
    /// No memory: a table of zero-sized elements or of no elements.
    None,
}

/// A fixed-length table of `T` that starts all-zero; see the module documentation.
pub struct ZeroedTable<T: ZeroValid> {
    ptr: NonNull<T>,
    len: usize,
    origin: Origin,
}

// SAFETY: the table owns its elements like a `Box<[T]>`; the raw pointers only name memory
// that no one else holds, so sending or sharing it is as safe as sending or sharing `[T]`.
unsafe impl<T: ZeroValid + Send> Send for ZeroedTable<T> {}
// SAFETY: as above; `&ZeroedTable<T>` gives out only `&[T]`.
unsafe impl<T: ZeroValid + Sync> Sync for ZeroedTable<T> {}

impl<T: ZeroValid> ZeroedTable<T> {
    /// A table of `len` all-zero elements from the global allocator: a large one is mapped
    /// lazily, page by page on first touch, so a table that a search uses sparsely costs
    /// only what it touches. Aborts like `Vec` when the memory cannot be had.
    pub fn new(len: usize) -> ZeroedTable<T> {
        Self::with_pages(len, false)
    }

    /// A table of `len` all-zero elements that asks for huge pages when it is at least
    /// [`HUGE_PAGE`] bytes (Linux; elsewhere the same as [`ZeroedTable::new`]). For tables a
    /// search fills densely: the first touch of each huge page zeroes all of its 2 MiB, so a
    /// sparsely used table would pay for far more memory than it uses.
    pub fn huge(len: usize) -> ZeroedTable<T> {
        Self::with_pages(len, true)
    }

    /// [`ZeroedTable::huge`] when `huge`, else [`ZeroedTable::new`].
    pub fn with_pages(len: usize, huge: bool) -> ZeroedTable<T> {
        let layout = match std::alloc::Layout::array::<T>(len) {
            Ok(l) => l,
            Err(_) => capacity_overflow(),
        };
        if layout.size() == 0 {
            return ZeroedTable {
                ptr: NonNull::dangling(),
                len,
                origin: Origin::None,
            };
        }
        #[cfg(target_os = "linux")]
        if huge && layout.size() >= HUGE_PAGE && layout.align() <= HUGE_PAGE {
            if let Some(t) = Self::mapped(len, layout.size()) {
                return t;
            }
        }
        #[cfg(not(target_os = "linux"))]
        let _ = huge;
        // SAFETY: `layout` has a non-zero size (checked above).
        let p = unsafe { std::alloc::alloc_zeroed(layout) } as *mut T;
        match NonNull::new(p) {
            Some(ptr) => ZeroedTable {
                ptr,
                len,
                origin: Origin::Heap(layout),
            },
            None => std::alloc::handle_alloc_error(layout),
        }
    }

    /// The table in its own anonymous mapping, aligned to a huge page and marked for huge
    /// pages; `None` when the system refuses the mapping (the heap is tried instead).
    #[cfg(target_os = "linux")]
    fn mapped(len: usize, size: usize) -> Option<ZeroedTable<T>> {
        // A whole number of huge pages, and one more to align the start.
        let body = size.checked_next_multiple_of(HUGE_PAGE)?;
        let map_len = body.checked_add(HUGE_PAGE)?;
        // SAFETY: an anonymous private mapping at an address of the kernel's choosing
        // touches no existing memory; the result is checked against MAP_FAILED.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                map_len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return None;
        }
        let base = base as *mut u8;
        let offset = (HUGE_PAGE - (base as usize) % HUGE_PAGE) % HUGE_PAGE;
        // SAFETY: `offset < HUGE_PAGE` and the mapping is `body + HUGE_PAGE` bytes long, so
        // `start .. start + body` lies inside it.
        let start = unsafe { base.add(offset) };
        // Only a hint: where the kernel has no huge pages (or THP is off) the table still
        // works on small pages, so the result is ignored.
        // SAFETY: `start .. start + body` is part of the mapping just made.
        unsafe {
            libc::madvise(start as *mut libc::c_void, body, libc::MADV_HUGEPAGE);
        }
        Some(ZeroedTable {
            // SAFETY: `start` is inside a successful mapping, hence non-null; it is aligned
            // to HUGE_PAGE, which is at least `T`'s alignment (checked by the caller).
            ptr: unsafe { NonNull::new_unchecked(start as *mut T) },
            len,
            origin: Origin::Mapped { base, len: map_len },
        })
    }

    /// Sets every element back to zero, keeping the memory (already mapped pages stay
    /// mapped, so the next search does not pay for mapping them again).
    pub fn zero(&mut self) {
        // SAFETY: `ptr` is valid for `len` elements owned by `self`, borrowed mutably here,
        // and the all-zero pattern is a valid `T` (`ZeroValid`).
        unsafe { std::ptr::write_bytes(self.ptr.as_ptr(), 0, self.len) };
    }

    /// Whether the table lives in its own mapping marked for huge pages (whether the
    /// kernel actually gave huge pages is up to it).
    pub fn huge_page_hint(&self) -> bool {
        #[cfg(target_os = "linux")]
        if let Origin::Mapped { .. } = self.origin {
            return true;
        }
        false
    }
}

#[cold]
fn capacity_overflow() -> ! {
    panic!("table size overflows the address space")
}

impl<T: ZeroValid> Deref for ZeroedTable<T> {
    type Target = [T];
    #[inline(always)]
    fn deref(&self) -> &[T] {
        // SAFETY: `ptr` is valid and aligned for `len` initialised elements (zeroed at
        // allocation, `ZeroValid`) for as long as `self` lives.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: ZeroValid> DerefMut for ZeroedTable<T> {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as in `deref`, and `&mut self` makes the borrow exclusive.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: ZeroValid> Drop for ZeroedTable<T> {
    fn drop(&mut self) {
        // The elements need no drop of their own: zero-valid types are plain integers.
        match self.origin {
            Origin::Heap(layout) => {
                // SAFETY: the memory came from `alloc_zeroed` with exactly this layout.
                unsafe { std::alloc::dealloc(self.ptr.as_ptr() as *mut u8, layout) }
            }
            #[cfg(target_os = "linux")]
            Origin::Mapped { base, len } => {
                // SAFETY: `base .. base + len` is the whole mapping made in `mapped`,
                // unmapped once, here.
                unsafe { libc::munmap(base as *mut libc::c_void, len) };
            }
            Origin::None => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU64, Ordering};

    #[test]
    fn small_tables_come_from_the_heap_zeroed() {
        assert!(!ZeroedTable::<u64>::new(HUGE_PAGE).huge_page_hint());
        let mut t: ZeroedTable<u32> = ZeroedTable::huge(1000);
        assert_eq!(t.len(), 1000);
        assert!(t.iter().all(|&x| x == 0));
        assert!(!t.huge_page_hint());
        t[999] = 7;
        t[0] = 3;
        assert_eq!((t[0], t[999]), (3, 7));
        t.zero();
        assert!(t.iter().all(|&x| x == 0));
    }

    #[test]
    fn large_tables_are_zeroed_aligned_and_writable_end_to_end() {
        // 3 MiB and a bit: not a whole number of huge pages.
        let n = (3 << 20) / 16 + 5;
        let mut t: ZeroedTable<[AtomicU64; 2]> = ZeroedTable::huge(n);
        assert_eq!(t.len(), n);
        #[cfg(target_os = "linux")]
        {
            assert!(t.huge_page_hint());
            assert_eq!(t.as_ptr() as usize % HUGE_PAGE, 0);
        }
        assert!(t
            .iter()
            .step_by(4096)
            .all(|e| e[0].load(Ordering::Relaxed) == 0));
        t[n - 1][1].store(u64::MAX, Ordering::Relaxed);
        t[0][0].store(1, Ordering::Relaxed);
        assert_eq!(t[n - 1][1].load(Ordering::Relaxed), u64::MAX);
        t.zero();
        assert_eq!(t[n - 1][1].load(Ordering::Relaxed), 0);
        assert_eq!(t[0][0].load(Ordering::Relaxed), 0);
    }

    #[test]
    fn empty_and_zero_sized_tables_need_no_memory() {
        let t: ZeroedTable<u64> = ZeroedTable::new(0);
        assert!(t.is_empty());
        let t: ZeroedTable<[u8; 0]> = ZeroedTable::new(5);
        assert_eq!(t.len(), 5);
    }

    #[test]
    fn tables_are_shared_between_threads() {
        let t: std::sync::Arc<ZeroedTable<AtomicU64>> =
            std::sync::Arc::new(ZeroedTable::huge(HUGE_PAGE / 8));
        let t2 = t.clone();
        std::thread::spawn(move || t2[12345].store(9, Ordering::Relaxed))
            .join()
            .expect("thread");
        assert_eq!(t[12345].load(Ordering::Relaxed), 9);
    }
}
