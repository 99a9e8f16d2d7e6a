// Publishing positions for the renderer (src/sim/gpu/publish.rs): each atom's
// (x, y, z, colour scalar) as four f32 at its canonical index ids[i], into a buffer the
// renderer reads on the same device, or a scratch buffer read back for the host. The colour
// scalars are CUDA's `publish` (kernels/analysis.cu) and the CPU's (sim/cpu/observe.rs):
// 0 speed, 1 kinetic energy, 2 height, 3 species, 4 dye, in f32 whatever the state's precision.
// Compiled after common.wgsl (whose group 0 it reads) in a module of its own; its outputs are
// a group of their own (1), bound only here, so the simulation's kernels keep their bindings.

struct PublishArgs {
    colour: u32,
    n: u32,
    // 1: the system has dye tags in `publish_dye` (dye.wgsl's words by canonical index).
    dye: u32,
    pad1: u32,
}

@group(1) @binding(1) var<storage, read_write> published: array<vec4<f32>>;
@group(1) @binding(2) var<uniform> publish_args: PublishArgs;
@group(1) @binding(3) var<storage, read> publish_dye: array<u32>;

@compute @workgroup_size(WG)
fn publish(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if i >= publish_args.n {
        return;
    }
    let x = pos[i];
    let v = vel[i].xyz;
    let v2 = v.x * v.x + v.y * v.y + v.z * v.z;
    let t = type_of_s(x);
    var s: f32;
    switch publish_args.colour {
        case 0u: {
            s = f32(sqrt(v2));
        }
        case 1u: {
            s = f32(0.5 * masses[t] * v2);
        }
        case 2u: {
            s = f32(x.y);
        }
        case 4u: {
            // Dye: the atom's tag (0 without a dye column).
            s = 0.0;
            if publish_args.dye != 0u {
                let c = ids[i];
                s = f32((publish_dye[c >> 1u] >> (16u * (c & 1u))) & 0xffffu);
            }
        }
        default: {
            s = f32(t);
        }
    }
    published[ids[i]] = vec4<f32>(vec3<f32>(x.xyz), s);
}
