// Atoms as sphere impostors: one screen-facing triangle per atom, expanded in the vertex shader from a
// storage buffer of vec4 (x, y, z, colour scalar) that any owner may fill (upload, CUDA
// interop); the fragment shader intersects the view ray with the sphere, writes the true
// depth and shades with a head light plus a key light.

struct Frame {
    view: mat4x4<f32>,
    proj: mat4x4<f32>,
    // x: radius (sigma), y: 1 for orthographic, z, w: colour scalar at the map's ends
    params: vec4<f32>,
    // x: colour map (0 viridis, 1 plasma-like warm, 2 single colour, 3 species, 4 dye), y: atom count,
    // z: 1 to draw atoms in reverse order (front to back when atoms were placed back to front),
    // w: the target's width | height << 16 (the splat path's pixel grid)
    map: vec4<u32>,
    // rgb: the single colour, or under the dye map the untagged atoms' colour; w: 0 hides the
    // untagged atoms under the dye map
    single: vec4<f32>,
    light: vec4<f32>,
};

@group(0) @binding(0) var<uniform> frame: Frame;
@group(0) @binding(1) var<storage, read> atoms: array<vec4<f32>>;

struct VOut {
    @builtin(position) clip: vec4<f32>,
    @location(0) view_pos: vec3<f32>,
    @location(1) centre: vec3<f32>,
    @location(2) scalar: f32,
};

// One plain draw of 3 N vertices (vertex 3 i + k is corner k of atom i).
@vertex
fn vs_main(@builtin(vertex_index) v: u32) -> VOut {
    let ii = v / 3u;
    let vi = v - 3u * ii;
    let a = atoms[select(ii, frame.map.y - 1u - ii, frame.map.z == 1u)];
    var out: VOut;
    if hidden(a.w) {
        // A degenerate triangle outside the view: no fragment at all.
        out.clip = vec4<f32>(2.0, 2.0, 2.0, 1.0);
        return out;
    }
    let c = (frame.view * vec4<f32>(a.xyz, 1.0)).xyz;
    let r = frame.params.x;
    // One triangle circumscribing the disc (its inscribed circle has radius 1): three vertices
    // per atom instead of a quad's four, which is what bounds the frame time at a million atoms.
    let corner = array<vec2<f32>, 3>(vec2<f32>(0.0, 2.0), vec2<f32>(-1.7320508, -1.0), vec2<f32>(1.7320508, -1.0))[vi];
    // The triangle lies in front of the sphere (its plane touches the sphere's nearest point), so
    // the surface depth the fragment shader writes is never nearer than the triangle's: that lets
    // the GPU reject hidden fragments early (conservative depth).
    var p: vec3<f32>;
    if frame.params.y > 0.5 {
        p = vec3<f32>(c.xy + corner * r, c.z + r);
    } else {
        // Perspective: the plane z = c.z + r, centred on the ray through the sphere's centre
        // and wide enough for the silhouette, which grows towards the edges of the view.
        let zq = c.z + r;
        let scale = zq / c.z;
        let oblique = length(c) / max(-c.z, 1e-3);
        p = vec3<f32>(c.xy * scale + corner * r * 1.6 * scale * oblique, zq);
    }
    out.clip = frame.proj * vec4<f32>(p, 1.0);
    out.view_pos = p;
    out.centre = c;
    out.scalar = a.w;
    return out;
}

fn viridis(t: f32) -> vec3<f32> {
    let c0 = vec3<f32>(0.2777, 0.0054, 0.3341);
    let c1 = vec3<f32>(0.1051, 1.4046, 1.3846);
    let c2 = vec3<f32>(-0.3309, 0.2148, 0.0951);
    let c3 = vec3<f32>(-4.6342, -5.7991, -19.3324);
    let c4 = vec3<f32>(6.2283, 14.1799, 56.6906);
    let c5 = vec3<f32>(4.7764, -13.7451, -65.3530);
    let c6 = vec3<f32>(-5.4355, 4.6459, 26.3124);
    return c0 + t * (c1 + t * (c2 + t * (c3 + t * (c4 + t * (c5 + t * c6)))));
}

fn warm(t: f32) -> vec3<f32> {
    let c0 = vec3<f32>(0.0587, 0.0233, 0.5433);
    let c1 = vec3<f32>(2.1765, 0.2384, 0.7540);
    let c2 = vec3<f32>(-2.6895, -7.4559, 3.1108);
    let c3 = vec3<f32>(6.1303, 42.3462, -28.5189);
    let c4 = vec3<f32>(-11.1074, -82.6663, 60.1398);
    let c5 = vec3<f32>(10.0231, 71.4136, -54.0722);
    let c6 = vec3<f32>(-3.6587, -22.9315, 18.1919);
    return c0 + t * (c1 + t * (c2 + t * (c3 + t * (c4 + t * (c5 + t * c6)))));
}

// One colour per species index, repeating after eight (Okabe-Ito, linear RGB; the same
// table as SPECIES_COLOURS in src/render/colour.rs).
fn species_colour(s: f32) -> vec3<f32> {
    let i = u32(max(round(s), 0.0)) % 8u;
    return array<vec3<f32>, 8>(
        vec3<f32>(0.0931, 0.4564, 0.8148),
        vec3<f32>(0.7913, 0.3467, 0.0000),
        vec3<f32>(0.0000, 0.3419, 0.1714),
        vec3<f32>(0.6038, 0.1912, 0.3864),
        vec3<f32>(0.8714, 0.7758, 0.0545),
        vec3<f32>(0.0000, 0.1683, 0.4452),
        vec3<f32>(0.6654, 0.1119, 0.0000),
        vec3<f32>(0.4969, 0.4969, 0.4969),
    )[i];
}

// One colour per dye source number from 1, repeating after six (Tol's vibrant, linear RGB;
// the same table as DYE_COLOURS in src/render/colour.rs); 0, untagged, in the frame's
// untagged colour.
fn dye_colour(s: f32) -> vec3<f32> {
    let n = u32(max(round(s), 0.0));
    if n == 0u {
        return frame.single.rgb;
    }
    return array<vec3<f32>, 6>(
        vec3<f32>(0.8550, 0.0331, 0.1845),
        vec3<f32>(0.0331, 0.4969, 0.8550),
        vec3<f32>(0.8550, 0.1845, 0.0331),
        vec3<f32>(0.0000, 0.3185, 0.2462),
        vec3<f32>(0.0000, 0.1845, 0.4969),
        vec3<f32>(0.6038, 0.0331, 0.0056),
    )[(n - 1u) % 6u];
}

// An untagged atom under the dye map with untagged atoms hidden: drawn nowhere.
fn hidden(s: f32) -> bool {
    return frame.map.x == 4u && frame.single.w < 0.5 && round(s) < 0.5;
}

fn base_colour(s: f32) -> vec3<f32> {
    if frame.map.x == 3u {
        return species_colour(s);
    }
    if frame.map.x == 4u {
        return dye_colour(s);
    }
    let span = max(frame.params.w - frame.params.z, 1e-6);
    let t = clamp((s - frame.params.z) / span, 0.0, 1.0);
    if frame.map.x == 0u {
        return clamp(viridis(t), vec3<f32>(0.0), vec3<f32>(1.0));
    } else if frame.map.x == 1u {
        return clamp(warm(t), vec3<f32>(0.0), vec3<f32>(1.0));
    }
    return frame.single.rgb;
}

struct FOut {
    @location(0) colour: vec4<f32>,
    @builtin(frag_depth) depth: f32,
};

/*EARLY_DEPTH*/
@fragment
fn fs_main(in: VOut) -> FOut {
    let r = frame.params.x;
    var hit: vec3<f32>;
    var view_dir: vec3<f32>;
    if frame.params.y > 0.5 {
        let d = in.view_pos.xy - in.centre.xy;
        let q = r * r - dot(d, d);
        if q < 0.0 {
            discard;
        }
        hit = vec3<f32>(in.view_pos.xy, in.centre.z + sqrt(q));
        view_dir = vec3<f32>(0.0, 0.0, 1.0);
    } else {
        let dir = normalize(in.view_pos);
        let b = dot(dir, in.centre);
        let disc = b * b - (dot(in.centre, in.centre) - r * r);
        if disc < 0.0 {
            discard;
        }
        hit = dir * (b - sqrt(disc));
        view_dir = -dir;
    }
    return shade(hit, in.centre, view_dir, in.scalar);
}

// The lit colour and depth of the sphere centred at `centre` (view space) at its surface
// point `hit`, seen along `view_dir` (toward the eye); shared with the splat path's resolve
// (shaders/splat.wgsl).
fn shade(hit: vec3<f32>, centre: vec3<f32>, view_dir: vec3<f32>, scalar: f32) -> FOut {
    let n = normalize(hit - centre);
    let key = normalize(frame.light.xyz);
    let diffuse = 0.65 * max(dot(n, key), 0.0) + 0.25 * max(dot(n, view_dir), 0.0);
    let h = normalize(key + view_dir);
    let spec = 0.35 * pow(max(dot(n, h), 0.0), 40.0);
    let base = base_colour(scalar);
    let clip = frame.proj * vec4<f32>(hit, 1.0);
    var out: FOut;
    out.colour = vec4<f32>(frame.light.w * (base * (0.22 + diffuse) + vec3<f32>(spec)), 1.0);
    out.depth = clip.z / clip.w;
    return out;
}
