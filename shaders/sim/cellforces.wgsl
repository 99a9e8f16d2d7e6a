// The cell-list forces (Algorithm::Cells, the engine's Search::Cells), mirroring
// kernels/forces.cu `cell_scan`: the atoms are binned into cells at least the largest pair
// cut-off wide and sorted by cell every step (cells.wgsl's count_cells, scan, scatter and
// order_cells, the rebuild flag raised by every atom's kick: the engine sets half_skin_sq
// below zero), and each atom scans the atoms of its 27 neighbour cells directly, no list.
// The cells come in the list build's stream order (dz, dy, dx from -1 to 1, dx fastest,
// `stencil_axis`: none beyond a wall, each cell once along a periodic axis of two), the atoms
// of a cell in ascending order, and every pair goes through forces.wgsl's `gather` (minimum
// image, species pair table and per-pair cut-offs, energies and virials on `ev` steps) and
// the atom through `finish_force` (walls, gravity, drive, obstacles, surfaces, the
// workgroup's sums). On the list's cell grid an atom sums the same terms in the same order
// as forces_list (tests/wgpu_cells.rs: the same bits on lavapipe); on its own, narrower grid
// in another order, to f32 round-off.

@compute @workgroup_size(WG)
fn forces_cells(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(local_invocation_id) lid: vec3<u32>,
    @builtin(workgroup_id) wid: vec3<u32>,
) {
    let i = gid.x;
    // The counts are done with once the atoms are in place (scan and scatter read them):
    // emptied here for the next binning, as build_list does for the lists.
    for (var c = i; c < P.n_cells; c += P.n_groups * WG) {
        atomicStore(&cell_count[c], 0u);
        atomicStore(&cell_fill[c], 0u);
    }
    let valid = i < P.n && atomicLoad(&flags[F_BLOWUP]) == 0u;
    var acc = Acc(vec3<real_f>(0.0), 0.0, 0.0);
    var pi = vec4<real_f>(0.0);
    if valid {
        pi = posf[i];
        let ti = type_of(pi);
        let c = cell_of[i];
        let cc = vec3<u32>(c % P.dims.x, (c / P.dims.x) % P.dims.y, c / (P.dims.x * P.dims.y));
        for (var t = 0u; t < 27u; t++) {
            let ax = stencil_axis(0u, cc.x, i32(t % 3u) - 1);
            let ay = stencil_axis(1u, cc.y, i32((t / 3u) % 3u) - 1);
            let az = stencil_axis(2u, cc.z, i32(t / 9u) - 1);
            if ax.x < 0 || ay.x < 0 || az.x < 0 {
                continue;
            }
            let r = cell_index(vec3<u32>(u32(ax.x), u32(ay.x), u32(az.x)));
            let end = cell_start[r + 1u];
            for (var j = cell_start[r]; j < end; j++) {
                if j != i {
                    gather(&acc, pi, ti, j);
                }
            }
        }
    }
    finish_force(i, lid.x, wid.x, acc, pi, valid);
}
