//! The wgpu backend's random numbers (`shaders/sim/rng.wgsl`) against the host's `rng`:
//! raw Philox4x32-10 outputs bit for bit (and Random123's known answers), `uniform4` within
//! an f32 ulp of `rng::uniform4` and strictly inside (0, 1), `normal4` within
//! 2e-5 + 2e-5 |z| of `rng::normal4` wherever |z| < 5 and finite everywhere. The draws cover
//! 4096 (index, counter) pairs for each of four seeds (high words set included); the
//! conversions are also checked on chosen raw numbers (the ends of the range, the rounding
//! boundaries, the quarter turns, u near 1).
//! Without any wgpu adapter (not even Mesa's lavapipe) it prints `skipped: no wgpu adapter`
//! and passes, unless ARGON_REQUIRE_RENDER=1 (as CI sets).

use argon_sandbox::render::offscreen::Gpu;
use argon_sandbox::rng::{self, Stream};

const RNG_WGSL: &str = include_str!("../shaders/sim/rng.wgsl");

/// Each case is (counter, key): mode 0 draws philox4x32, uniform4 and normal4 for the counter
/// [index, stream, counter_lo, counter_hi] and key [seed_lo, seed_hi]; mode 1 converts the
/// four raw numbers in `counter` (uniforms of each, Box-Muller on both pairs).
const KERNEL: &str = "
struct Case { counter: vec4<u32>, key: vec4<u32> }
@group(0) @binding(0) var<storage, read> cases: array<Case>;
@group(0) @binding(1) var<storage, read_write> out: array<vec4<u32>>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    if i >= arrayLength(&cases) { return; }
    let c = cases[i].counter;
    let k = cases[i].key.xy;
    if cases[i].key.z == 1u {
        out[3u * i] = c;
        out[3u * i + 1u] = bitcast<vec4<u32>>(vec4<f32>(rng_u01(c.x), rng_u01(c.y), rng_u01(c.z), rng_u01(c.w)));
        out[3u * i + 2u] = bitcast<vec4<u32>>(vec4<f32>(rng_box_muller(c.x, c.y), rng_box_muller(c.z, c.w)));
    } else {
        out[3u * i] = philox4x32(c, k);
        out[3u * i + 1u] = bitcast<vec4<u32>>(uniform4(k, c.y, c.x, c.zw));
        out[3u * i + 2u] = bitcast<vec4<u32>>(normal4(k, c.y, c.x, c.zw));
    }
}
";

const DRAW: u32 = 0;
const CONVERT: u32 = 1;

/// What the shader wrote for one case.
struct Out {
    raw: [u32; 4],
    uniform: [f32; 4],
    normal: [f32; 4],
}

fn gpu() -> Option<Gpu> {
    match Gpu::headless() {
        Ok(g) => Some(g),
        Err(e) => {
            assert!(std::env::var_os("ARGON_REQUIRE_RENDER").is_none(), "ARGON_REQUIRE_RENDER is set: {e}");
            println!("skipped: no wgpu adapter ({e})");
            None
        }
    }
}

/// Runs the kernel over `cases` ([counter, key] as 8 words) and reads back what it wrote.
fn run(gpu: &Gpu, cases: &[[u32; 8]]) -> Vec<Out> {
    use wgpu::util::DeviceExt;
    let device = &gpu.device;
    let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some("wgsl_rng"),
        source: wgpu::ShaderSource::Wgsl(format!("{RNG_WGSL}\n{KERNEL}").into()),
    });
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some("wgsl_rng"),
        layout: None,
        module: &module,
        entry_point: Some("main"),
        compilation_options: Default::default(),
        cache: None,
    });
    if let Some(e) = pollster::block_on(scope.pop()) {
        panic!("rng.wgsl + test kernel do not compile: {e}");
    }
    let input = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("cases"),
        contents: bytemuck::cast_slice(cases),
        usage: wgpu::BufferUsages::STORAGE,
    });
    let size = (cases.len() * 48) as u64;
    let output = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("out"),
        size,
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
        mapped_at_creation: false,
    });
    let readback = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("readback"),
        size,
        usage: wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::MAP_READ,
        mapped_at_creation: false,
    });
    let bind = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some("wgsl_rng"),
        layout: &pipeline.get_bind_group_layout(0),
        entries: &[
            wgpu::BindGroupEntry { binding: 0, resource: input.as_entire_binding() },
            wgpu::BindGroupEntry { binding: 1, resource: output.as_entire_binding() },
        ],
    });
    let mut enc = device.create_command_encoder(&Default::default());
    {
        let mut pass = enc.begin_compute_pass(&Default::default());
        pass.set_pipeline(&pipeline);
        pass.set_bind_group(0, &bind, &[]);
        pass.dispatch_workgroups((cases.len() as u32).div_ceil(64), 1, 1);
    }
    enc.copy_buffer_to_buffer(&output, 0, &readback, 0, size);
    gpu.queue.submit(Some(enc.finish()));
    let slice = readback.slice(..);
    let (tx, rx) = std::sync::mpsc::channel();
    slice.map_async(wgpu::MapMode::Read, move |r| {
        let _ = tx.send(r);
    });
    device.poll(wgpu::PollType::wait_indefinitely()).expect("poll");
    rx.recv().expect("map callback").expect("map");
    let words: Vec<u32> = bytemuck::cast_slice(&slice.get_mapped_range().expect("mapped range")).to_vec();
    readback.unmap();
    words
        .chunks_exact(12)
        .map(|w| Out {
            raw: [w[0], w[1], w[2], w[3]],
            uniform: [4, 5, 6, 7].map(|i| f32::from_bits(w[i])),
            normal: [8, 9, 10, 11].map(|i| f32::from_bits(w[i])),
        })
        .collect()
}

/// A draw case: (seed, stream, index, counter) as the shader reads them.
fn draw_case(seed: u64, stream: Stream, index: u32, counter: u64) -> [u32; 8] {
    let s = stream as u32;
    [index, s, counter as u32, (counter >> 32) as u32, seed as u32, (seed >> 32) as u32, DRAW, 0]
}

/// The host's conversions from raw numbers, written out as `rng::uniform4` and `rng::normal4`
/// do them (checked equal to those on every draw), for the conversion cases.
fn host_uniform(x: u32) -> f64 {
    (x as f64 + 0.5) * (1.0 / 4_294_967_296.0)
}

fn host_box_muller(x1: u32, x2: u32) -> [f64; 2] {
    let r = (-2.0 * host_uniform(x1).ln()).sqrt();
    let t = std::f64::consts::TAU * host_uniform(x2);
    [r * t.cos(), r * t.sin()]
}

/// The spacing of f32 numbers at `y` in (0, 1].
fn f32_ulp(y: f64) -> f64 {
    let exponent = ((y.to_bits() >> 52) & 0x7ff) as i32 - 1023;
    2f64.powi(exponent - 23)
}

/// Largest errors seen and the failures, described.
#[derive(Default)]
struct Tally {
    uniforms: usize,
    not_nearest: usize,
    max_ulps: f64,
    normals: usize,
    max_abs: f64,
    max_rel: f64,
    worst_abs_at: String,
    failures: Vec<String>,
}

impl Tally {
    fn uniform(&mut self, got: f32, want: f64, what: &str) {
        self.uniforms += 1;
        let ulps = (got as f64 - want).abs() / f32_ulp(want);
        self.max_ulps = self.max_ulps.max(ulps);
        // Only the clamp below 1 (x >= 2^32 - 128) may differ from the nearest f32.
        if got != want as f32 && want < 1.0 - 2f64.powi(-25) {
            self.not_nearest += 1;
        }
        if ulps > 1.0 || got <= 0.0 || got >= 1.0 || !got.is_finite() {
            self.failures.push(format!("uniform {what}: wgsl {got:e} host {want:e} ({ulps:.2} ulp)"));
        }
    }

    fn normal(&mut self, got: f32, want: f64, what: &str) {
        self.normals += 1;
        if !got.is_finite() {
            self.failures.push(format!("normal {what}: wgsl {got} host {want:e}"));
            return;
        }
        if want.abs() >= 5.0 {
            return;
        }
        let err = (got as f64 - want).abs();
        if err > self.max_abs {
            self.max_abs = err;
            self.worst_abs_at = format!("{what}: wgsl {got:e} host {want:e}");
        }
        if want.abs() > 1e-3 {
            self.max_rel = self.max_rel.max(err / want.abs());
        }
        if err > 2e-5 + 2e-5 * want.abs() {
            self.failures.push(format!("normal {what}: wgsl {got:e} host {want:e} (error {err:.2e})"));
        }
    }

    fn assert_ok(&self, name: &str) {
        println!(
            "{name}: {} uniforms, max {:.3} ulp, {} not the nearest f32 (below the clamp); \
             {} normals, max error {:.2e} absolute ({}), {:.2e} relative (|z| > 1e-3)",
            self.uniforms, self.max_ulps, self.not_nearest, self.normals, self.max_abs, self.worst_abs_at, self.max_rel
        );
        let shown: Vec<&String> = self.failures.iter().take(12).collect();
        assert!(self.failures.is_empty(), "{name}: {} failures, first: {shown:#?}", self.failures.len());
        // Within an ulp is the contract; the shader does better (one rounding), and checking
        // that catches a conversion that drops x's low bits (f32(x) + 0.5: up to 0.75 ulp).
        assert_eq!(self.not_nearest, 0, "{name}: uniforms not the nearest f32 to (x + 0.5) / 2^32");
    }
}

/// The raw numbers where the conversions are delicate: the ends of the range, where the
/// limbs split (256), where u rounds to 1 (2^32 - 128), where -ln u switches to its series
/// (2^32 - 2^27), and the quarter turns of t (multiples of 2^30) and the points halfway
/// between them where the reduction changes quadrant (odd multiples of 2^29).
fn edge_raws() -> Vec<u32> {
    let mut xs = vec![0, 1, 2, 127, 128, 255, 256, 257, 0xFFFF, 0x1_0000, (1 << 24) - 1, 1 << 24, (1 << 24) + 1];
    for k in 1..8u32 {
        let m = k << 29;
        xs.extend([m - 1, m, m + 1]);
    }
    let top = |d: u32| u32::MAX - d;
    xs.extend([top((1 << 27) + 1), top(1 << 27), top((1 << 27) - 1), top(1 << 20), top(129), top(128), top(127)]);
    xs.extend([top(2), top(1), top(0)]);
    xs
}

fn conversion_cases() -> Vec<[u32; 8]> {
    let xs = edge_raws();
    let mut cases = Vec::new();
    for (i, &a) in xs.iter().enumerate() {
        for (j, &b) in xs.iter().enumerate() {
            // Each pair both ways round, and each x beside a spread-out partner.
            let spread = (i as u32 * 64 + j as u32).wrapping_mul(0x9E37_79B9);
            cases.push([a, b, spread, a, 0, 0, CONVERT, 0]);
        }
    }
    // u sweeping towards 1: -ln u from the builtin log into the series and down to 2^-33.
    for k in 0..4096u32 {
        let spread = k.wrapping_mul(0x9E37_79B9);
        cases.push([u32::MAX - k * (1 << 16), spread, u32::MAX - k, spread ^ 0x5555_5555, 0, 0, CONVERT, 0]);
    }
    cases
}

const SEEDS: [u64; 4] = [0, 1, 0xDEAD_BEEF_1234_5678, u64::MAX];
const STREAMS: [Stream; 3] = [Stream::Langevin, Stream::SurfaceFriction, Stream::TunnelInflow];
const PAIRS: u32 = 4096;

/// (stream, index, counter) for draw `j` of a seed: small and huge indices and counters,
/// counters with high words set (2^32, 2^33 + 5, u64::MAX) among them.
fn pair(j: u32) -> (Stream, u32, u64) {
    let index = match j % 4 {
        0 => j,
        1 => j.wrapping_mul(0x9E37_79B9),
        2 => u32::MAX - j,
        _ => j / 4,
    };
    let counters = [0, 1, 2, 1000, (1 << 32) - 1, 1 << 32, (1 << 33) + 5, u64::MAX];
    let counter = match (j / 4) % 10 {
        8 => j as u64,
        9 => (j as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15),
        c => counters[c as usize],
    };
    (STREAMS[(j % 3) as usize], index, counter)
}

#[test]
fn wgsl_rng_matches_host() {
    let Some(gpu) = gpu() else { return };
    println!("adapter: {}", gpu.describe());

    // Random123's known answers, then the draws.
    let known = [
        ([0u32; 4], [0u32; 2], [0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8]),
        ([u32::MAX; 4], [u32::MAX; 2], [0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd]),
    ];
    let mut cases: Vec<[u32; 8]> =
        known.iter().map(|(c, k, _)| [c[0], c[1], c[2], c[3], k[0], k[1], DRAW, 0]).collect();
    let mut draws = Vec::new();
    for seed in SEEDS {
        for j in 0..PAIRS {
            let (stream, index, counter) = pair(j);
            draws.push((seed, stream, index, counter));
            cases.push(draw_case(seed, stream, index, counter));
        }
    }
    let conversions = conversion_cases();
    cases.extend(&conversions);
    let out = run(&gpu, &cases);
    assert_eq!(out.len(), cases.len());

    for ((c, k, want), got) in known.iter().zip(&out) {
        assert_eq!(rng::philox4x32(*c, *k), *want, "host philox4x32 known answer");
        assert_eq!(got.raw, *want, "wgsl philox4x32 known answer for counter {c:x?} key {k:x?}");
    }

    let mut raw_mismatches = Vec::new();
    let mut tally = Tally::default();
    for (&(seed, stream, index, counter), got) in draws.iter().zip(&out[known.len()..]) {
        let what = format!("seed {seed:#x} stream {stream:?} index {index:#x} counter {counter:#x}");
        let key = [seed as u32, (seed >> 32) as u32];
        let raw = rng::philox4x32([index, stream as u32, counter as u32, (counter >> 32) as u32], key);
        if got.raw != raw {
            raw_mismatches.push(format!("{what}: wgsl {:08x?} host {raw:08x?}", got.raw));
        }
        let uniform = rng::uniform4(seed, stream, index, counter);
        let normal = rng::normal4(seed, stream, index, counter);
        // The conversion cases below are judged by the host's own formulas, written out here.
        let mirror = [host_box_muller(raw[0], raw[1]), host_box_muller(raw[2], raw[3])].concat();
        assert_eq!(uniform, raw.map(host_uniform), "host_uniform mirrors rng::uniform4");
        assert_eq!(normal.as_slice(), mirror.as_slice(), "host_box_muller mirrors rng::normal4");
        for i in 0..4 {
            tally.uniform(got.uniform[i], uniform[i], &format!("{what} [{i}]"));
            tally.normal(got.normal[i], normal[i], &format!("{what} [{i}]"));
        }
    }
    let first: Vec<&String> = raw_mismatches.iter().take(3).collect();
    assert!(raw_mismatches.is_empty(), "{} raw mismatches, first: {first:#?}", raw_mismatches.len());
    println!("philox4x32: {} draws and 2 known answers bit for bit", draws.len());
    tally.assert_ok("draws");

    let mut tally = Tally::default();
    for (case, got) in conversions.iter().zip(&out[out.len() - conversions.len()..]) {
        let x = [case[0], case[1], case[2], case[3]];
        assert_eq!(got.raw, x, "conversion case read back");
        let what = format!("raw {x:08x?}");
        let normal = [host_box_muller(x[0], x[1]), host_box_muller(x[2], x[3])].concat();
        for i in 0..4 {
            tally.uniform(got.uniform[i], host_uniform(x[i]), &format!("{what} [{i}]"));
            tally.normal(got.normal[i], normal[i], &format!("{what} [{i}]"));
        }
    }
    tally.assert_ok("conversions");
}

/// `shaders/sim/rng64.wgsl`, the mixed and double precision kernels' numbers: per case the
/// uniforms and normals (of a draw, or in mode 1 of the four raw numbers in `counter`), and
/// (ln x, e^-x, x^0.37 as e^(0.37 ln x)) of one x.
const KERNEL64: &str = "
struct Case { counter: vec4<u32>, key: vec4<u32> }
@group(0) @binding(0) var<storage, read> cases: array<Case>;
@group(0) @binding(1) var<storage, read_write> out: array<vec4<f64>>;
@group(0) @binding(2) var<storage, read> xs: array<f64>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    if i >= arrayLength(&cases) { return; }
    let c = cases[i].counter;
    let k = cases[i].key.xy;
    if cases[i].key.z == 1u {
        out[3u * i] = vec4<f64>(rng_u01_64(c.x), rng_u01_64(c.y), rng_u01_64(c.z), rng_u01_64(c.w));
        out[3u * i + 1u] = vec4<f64>(rng_box_muller64(c.x, c.y), rng_box_muller64(c.z, c.w));
    } else {
        out[3u * i] = uniform4_64(k, c.y, c.x, c.zw);
        out[3u * i + 1u] = normal4_64(k, c.y, c.x, c.zw);
    }
    let x = xs[i];
    out[3u * i + 2u] = vec4<f64>(rng_ln64(x), rng_exp64(-x), rng_exp64(0.37 * rng_ln64(x)), 0.0);
}
";

/// Runs KERNEL64 over `cases` with one x each on a device with 64-bit floats.
fn run64(gpu: &Gpu, cases: &[[u32; 8]], xs: &[f64]) -> Vec<[f64; 12]> {
    use wgpu::util::DeviceExt;
    let device = &gpu.device;
    let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
    let rng64 = include_str!("../shaders/sim/rng64.wgsl");
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some("wgsl_rng64"),
        source: wgpu::ShaderSource::Wgsl(format!("{RNG_WGSL}\n{rng64}\n{KERNEL64}").into()),
    });
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some("wgsl_rng64"),
        layout: None,
        module: &module,
        entry_point: Some("main"),
        compilation_options: Default::default(),
        cache: None,
    });
    if let Some(e) = pollster::block_on(scope.pop()) {
        panic!("rng.wgsl + rng64.wgsl + test kernel do not compile: {e}");
    }
    let buffer = |label, bytes: &[u8]| {
        device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some(label),
            contents: bytes,
            usage: wgpu::BufferUsages::STORAGE,
        })
    };
    let input = buffer("cases", bytemuck::cast_slice(cases));
    let x_in = buffer("xs", bytemuck::cast_slice(xs));
    let size = (cases.len() * 96) as u64;
    let output = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("out"),
        size,
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
        mapped_at_creation: false,
    });
    let readback = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("readback"),
        size,
        usage: wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::MAP_READ,
        mapped_at_creation: false,
    });
    let bind = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some("wgsl_rng64"),
        layout: &pipeline.get_bind_group_layout(0),
        entries: &[
            wgpu::BindGroupEntry { binding: 0, resource: input.as_entire_binding() },
            wgpu::BindGroupEntry { binding: 1, resource: output.as_entire_binding() },
            wgpu::BindGroupEntry { binding: 2, resource: x_in.as_entire_binding() },
        ],
    });
    let mut enc = device.create_command_encoder(&Default::default());
    {
        let mut pass = enc.begin_compute_pass(&Default::default());
        pass.set_pipeline(&pipeline);
        pass.set_bind_group(0, &bind, &[]);
        pass.dispatch_workgroups((cases.len() as u32).div_ceil(64), 1, 1);
    }
    enc.copy_buffer_to_buffer(&output, 0, &readback, 0, size);
    gpu.queue.submit(Some(enc.finish()));
    let slice = readback.slice(..);
    let (tx, rx) = std::sync::mpsc::channel();
    slice.map_async(wgpu::MapMode::Read, move |r| {
        let _ = tx.send(r);
    });
    device.poll(wgpu::PollType::wait_indefinitely()).expect("poll");
    rx.recv().expect("map callback").expect("map");
    let v: Vec<f64> = bytemuck::pod_collect_to_vec(&slice.get_mapped_range().expect("mapped range"));
    readback.unmap();
    v.chunks_exact(12).map(|c| c.try_into().unwrap()).collect()
}

/// The f64 conversions against the host's in f64: uniforms bit for bit, normals within
/// 1e-14 (1 + |z|) of `rng::normal4` (a few f64 ulps: the host's ln and cos/sin are libm's,
/// the shader's its own series), for draws and for the delicate raw numbers of the f32 test
/// (ends of the range, u near 1, the quarter turns); ln x, e^-x and x^0.37 (the CSVR gamma
/// draw's) within 1e-14 relative (ln: absolute near x = 1) over x from 1e-12 to 700. Skipped
/// (said) where the adapter has no SHADER_F64.
#[test]
fn wgsl_rng64_matches_host_in_f64() {
    let features = |a: &wgpu::Adapter| a.features() & wgpu::Features::SHADER_F64;
    let gpu = match Gpu::headless_with(features) {
        Ok(g) => g,
        Err(e) => {
            assert!(std::env::var_os("ARGON_REQUIRE_RENDER").is_none(), "ARGON_REQUIRE_RENDER is set: {e}");
            println!("skipped: no wgpu adapter ({e})");
            return;
        }
    };
    if !gpu.device.features().contains(wgpu::Features::SHADER_F64) {
        println!("skipped: adapter has no SHADER_F64 ({})", gpu.describe());
        return;
    }
    let mut cases = Vec::new();
    let mut draws = Vec::new();
    for seed in SEEDS {
        for j in 0..PAIRS / 4 {
            let (stream, index, counter) = pair(j);
            draws.push((seed, stream, index, counter));
            cases.push(draw_case(seed, stream, index, counter));
        }
    }
    let conversions = conversion_cases();
    cases.extend(&conversions);
    let xs: Vec<f64> =
        (0..cases.len()).map(|i| 1e-12 * (700e12f64).powf(i as f64 / (cases.len() - 1) as f64)).collect();
    let out = run64(&gpu, &cases, &xs);
    let (mut worst_z, mut worst_f) = (0.0f64, 0.0f64);
    let mut failures = Vec::new();
    let wanted = draws
        .iter()
        .map(|&(seed, stream, index, counter)| {
            let what = format!("seed {seed:#x} stream {stream:?} index {index:#x} counter {counter:#x}");
            (what, rng::uniform4(seed, stream, index, counter), rng::normal4(seed, stream, index, counter))
        })
        .chain(conversions.iter().map(|c| {
            let x = [c[0], c[1], c[2], c[3]];
            let normal = [host_box_muller(x[0], x[1]), host_box_muller(x[2], x[3])].concat();
            (format!("raw {x:08x?}"), x.map(host_uniform), [normal[0], normal[1], normal[2], normal[3]])
        }));
    for (k, ((what, uniform, normal), got)) in wanted.zip(&out).enumerate() {
        for i in 0..4 {
            if got[i] != uniform[i] {
                failures.push(format!("uniform {what} [{i}]: wgsl {:e} host {:e}", got[i], uniform[i]));
            }
            let err = (got[4 + i] - normal[i]).abs() / (1.0 + normal[i].abs());
            worst_z = worst_z.max(err);
            if err > 1e-14 {
                failures.push(format!("normal {what} [{i}]: wgsl {:e} host {:e}", got[4 + i], normal[i]));
            }
        }
        let x = xs[k];
        let checks = [
            ("ln", got[8], x.ln(), 1.0),
            ("exp", got[9], (-x).exp(), (-x).exp()),
            ("pow", got[10], x.powf(0.37), x.powf(0.37)),
        ];
        for (name, g, want, scale) in checks {
            let err = (g - want).abs() / scale.max(want.abs()).max(f64::MIN_POSITIVE);
            worst_f = worst_f.max(err);
            if err > 1e-14 {
                failures.push(format!("{name}({x:e}): wgsl {g:e} host {want:e}"));
            }
        }
    }
    println!(
        "rng64: {} draws and {} conversions, uniforms bit for bit; normals within {worst_z:.1e} (1 + |z|); \
         ln, exp, pow within {worst_f:.1e}",
        draws.len(),
        conversions.len()
    );
    let shown: Vec<&String> = failures.iter().take(12).collect();
    assert!(failures.is_empty(), "{} failures, first: {shown:#?}", failures.len());
}
