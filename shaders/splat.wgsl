// Atoms drawn by compute splatting (src/render/splat.rs), appended to atoms.wgsl (its Frame,
// bindings 0 and 1, colour maps and `shade`). One invocation per atom walks the pixels of its
// sphere's screen bounds, intersects each pixel centre's view ray with the sphere, and keeps
// the nearest (depth, atom) per pixel with a 64-bit atomic max on (~depth bits, atom index);
// a full-screen pass then shades each covered pixel from its atom, exactly as fs_main would.
// Datacentre GPUs rasterise on a few units only; compute runs on all of them.

@group(0) @binding(2) var<storage, read_write> vis: array<atomic<u64>>;
@group(0) @binding(3) var<storage, read> vis_read: array<vec2<u32>>;

fn target_size() -> vec2<u32> {
    return vec2<u32>(frame.map.w & 0xffffu, frame.map.w >> 16u);
}

// Normalised device x, y of the pixel centre `p` (pixels from the top left).
fn pixel_ndc(p: vec2<f32>, size: vec2<f32>) -> vec2<f32> {
    return vec2<f32>(p.x / size.x * 2.0 - 1.0, 1.0 - p.y / size.y * 2.0);
}

// Where the view ray through `ndc` meets the sphere of radius r centred at c (view space):
// (hit, 1), or w < 0 for a miss. The same arithmetic as fs_main.
fn sphere_at(ndc: vec2<f32>, c: vec3<f32>, r: f32) -> vec4<f32> {
    if frame.params.y > 0.5 {
        let v = vec2<f32>((ndc.x - frame.proj[3][0]) / frame.proj[0][0], (ndc.y - frame.proj[3][1]) / frame.proj[1][1]);
        let d = v - c.xy;
        let q = r * r - dot(d, d);
        if q < 0.0 {
            return vec4<f32>(0.0, 0.0, 0.0, -1.0);
        }
        return vec4<f32>(v, c.z + sqrt(q), 1.0);
    }
    let dir = normalize(vec3<f32>(ndc.x / frame.proj[0][0], ndc.y / frame.proj[1][1], -1.0));
    let b = dot(dir, c);
    let disc = b * b - (dot(c, c) - r * r);
    if disc < 0.0 {
        return vec4<f32>(0.0, 0.0, 0.0, -1.0);
    }
    return vec4<f32>(dir * (b - sqrt(disc)), 1.0);
}

@compute @workgroup_size(64)
fn splat_main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    // Large counts spill over the y dimension of the dispatch.
    let i = gid.x + gid.y * groups.x * 64u;
    if i >= frame.map.y {
        return;
    }
    let a = atoms[i];
    if hidden(a.w) {
        return;
    }
    let c = (frame.view * vec4<f32>(a.xyz, 1.0)).xyz;
    let r = frame.params.x;
    let size = target_size();
    let sz = vec2<f32>(size);
    var centre: vec2<f32>;
    var half: vec2<f32>;
    if frame.params.y > 0.5 {
        centre = (frame.proj * vec4<f32>(c, 1.0)).xy;
        half = r * vec2<f32>(frame.proj[0][0], frame.proj[1][1]);
    } else {
        // In front of the eye only; the silhouette lies within the angular radius that
        // vs_main's triangle covers.
        if c.z > -r {
            return;
        }
        let p = frame.proj * vec4<f32>(c, 1.0);
        centre = p.xy / p.w;
        let oblique = length(c) / -c.z;
        half = (r * 1.6 * oblique / -c.z) * vec2<f32>(frame.proj[0][0], frame.proj[1][1]);
    }
    // Pixels whose centres lie inside the bounds (pixel x spans [x, x + 1)).
    let lo = vec2<f32>((centre.x - half.x + 1.0) * 0.5 * sz.x, (1.0 - (centre.y + half.y)) * 0.5 * sz.y);
    let hi = vec2<f32>((centre.x + half.x + 1.0) * 0.5 * sz.x, (1.0 - (centre.y - half.y)) * 0.5 * sz.y);
    let x0 = i32(max(ceil(lo.x - 0.5), 0.0));
    let y0 = i32(max(ceil(lo.y - 0.5), 0.0));
    let x1 = i32(min(floor(hi.x - 0.5), sz.x - 1.0));
    let y1 = i32(min(floor(hi.y - 0.5), sz.y - 1.0));
    for (var y = y0; y <= y1; y++) {
        for (var x = x0; x <= x1; x++) {
            let h = sphere_at(pixel_ndc(vec2<f32>(f32(x) + 0.5, f32(y) + 0.5), sz), c, r);
            if h.w < 0.0 {
                continue;
            }
            let clip = frame.proj * vec4<f32>(h.xyz, 1.0);
            let z = clip.z / clip.w;
            if z < 0.0 || z > 1.0 {
                continue;
            }
            let key = (u64(~bitcast<u32>(z)) << 32u) | u64(i);
            atomicMax(&vis[u32(y) * size.x + u32(x)], key);
        }
    }
}

@vertex
fn vs_resolve(@builtin(vertex_index) v: u32) -> @builtin(position) vec4<f32> {
    // One triangle covering the target.
    let p = vec2<f32>(f32((v << 1u) & 2u), f32(v & 2u));
    return vec4<f32>(p * 2.0 - 1.0, 0.0, 1.0);
}

@fragment
fn fs_resolve(@builtin(position) pos: vec4<f32>) -> FOut {
    let size = target_size();
    let x = u32(pos.x);
    let y = u32(pos.y);
    let e = vis_read[y * size.x + x];
    // 0: no atom covers this pixel (a covered pixel's key holds ~depth, never 0 for z <= 1).
    if e.y == 0u {
        discard;
    }
    let a = atoms[e.x];
    let c = (frame.view * vec4<f32>(a.xyz, 1.0)).xyz;
    let h = sphere_at(pixel_ndc(vec2<f32>(f32(x) + 0.5, f32(y) + 0.5), vec2<f32>(size)), c, frame.params.x);
    var view_dir = vec3<f32>(0.0, 0.0, 1.0);
    if frame.params.y <= 0.5 {
        view_dir = -normalize(h.xyz);
    }
    return shade(h.xyz, c, view_dir, a.w);
}
