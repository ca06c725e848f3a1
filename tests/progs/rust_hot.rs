// rust_hot: a Rust program as rustc builds it by default (LLD on x86-64
// Linux, no frame pointers, legacy or v0 symbol names), for the profiler's
// tests: main -> outer -> work::spin, spinning.
//   rust_hot SECONDS READY_FILE
// READY_FILE gets the process's PID once the loop runs.
mod work {
    #[inline(never)]
    pub fn spin(n: u64) -> u64 {
        let mut s = n;
        for i in 0..2_000_000u64 {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(i);
        }
        std::hint::black_box(s)
    }
}

#[inline(never)]
fn outer(n: u64) -> u64 {
    work::spin(n) + 1
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let secs: u64 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(10);
    let start = std::time::Instant::now();
    let mut x = outer(0);
    if let Some(f) = args.get(2) {
        std::fs::write(f, format!("{}\n", std::process::id())).expect("ready file");
    }
    while start.elapsed().as_secs() < secs {
        x = outer(x);
    }
    println!("{}", x);
}
