//! A file claiming an absurd atom count is refused before anything is allocated for it.
//! Alone in its own test binary because it swaps in a counting global allocator.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use argon_sandbox::io::extxyz::{parse_extxyz, read_extxyz};

struct Counting;
static LARGEST: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LARGEST.fetch_max(layout.size(), Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LARGEST.fetch_max(new_size, Ordering::Relaxed);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

#[test]
fn huge_counts_are_refused_without_allocating() {
    let lattice = r#"Lattice="10 0 0 0 10 0 0 0 10" Properties=species:S:1:pos:R:3"#;
    let dir = std::env::temp_dir().join(format!("argon-io-alloc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("huge.xyz");
    // 10^12 atoms: over the limit. 4*10^7: under it, but a 60-byte file cannot hold them.
    for count in ["1000000000000", "40000000"] {
        let text = format!("{count}\n{lattice}\nAr 0 0 0\n");
        std::fs::write(&path, &text).unwrap();
        LARGEST.store(0, Ordering::Relaxed);
        let e1 = parse_extxyz(&text, "huge.xyz").unwrap_err();
        let e2 = read_extxyz(&path).unwrap_err();
        let largest = LARGEST.load(Ordering::Relaxed);
        assert_eq!((e1.line(), e2.line()), (Some(1), Some(1)), "{e1} / {e2}");
        assert!(largest < 64 * 1024, "largest allocation {largest} bytes for {count} atoms");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
