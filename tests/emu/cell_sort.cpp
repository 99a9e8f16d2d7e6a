// Runs the CUDA cell sort (cells_sort, kernels/cells.cu, compiled on the host with warp.h) on
// cells of 0 to 150 atoms in a shuffled arrival order, each atom's key its sub-cell (the bits
// of `slot` above SLOT_BITS, many atoms sharing one) then its index, and checks that every
// cell's atoms come out in key order with their positions, velocities and ids gathered
// along. With LARGE the key is the index alone (the kernel's path past 2^26 atoms, taken by
// the atom count, which the kernel only compares). Prints one summary line; exits 1 with the
// first problems on stderr.
//   cell_sort SEED LARGE
#include <cstdio>
#include <random>
#include <vector>

static const Consts* g_c;
static const Bufs* g_b;
static void sort_cells() { cells_sort(*g_c, *g_b, FLAG_ALWAYS); }

int main(int argc, char** argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: cell_sort SEED LARGE\n");
        return 2;
    }
    unsigned seed = (unsigned)atoi(argv[1]);
    bool large = atoi(argv[2]) != 0;
    std::mt19937_64 rng(seed);
    // Populations around the warp's 32 (one round of keys, two, several) and empty cells.
    std::vector<int> pops = {0, 1, 2, 31, 32, 33, 63, 64, 65, 96, 97, 150, 0, 18, 19};
    for (int k = 0; k < 40; k++) pops.push_back((int)(rng() % 46));
    int n_cells = (int)pops.size();
    std::vector<int> cell_start(n_cells + 1, 0);
    for (int k = 0; k < n_cells; k++) cell_start[k + 1] = cell_start[k] + pops[k];
    int n = cell_start[n_cells];

    // Atom v arrives in the cell whose range holds its place in a shuffle.
    std::vector<unsigned int> order(n);
    for (int v = 0; v < n; v++) order[v] = (unsigned)v;
    std::shuffle(order.begin(), order.end(), rng);
    std::vector<int> slot(n);
    std::vector<real_s4> pos(n), vel(n), pos2(n), vel2(n);
    std::vector<unsigned int> ids(n), ids2(n, 0xFFFFFFFFu);
    for (int k = 0; k < n_cells; k++)
        for (int x = cell_start[k]; x < cell_start[k + 1]; x++) {
            unsigned v = order[x];
            unsigned sub = (unsigned)(rng() % 8) * 9;  // few distinct sub-cells: ties broken by index
            slot[v] = (int)((unsigned)(x - cell_start[k]) | (sub << SLOT_BITS));
        }
    for (int v = 0; v < n; v++) {
        pos[v] = real_s4{(real_s)v, (real_s)(2 * v), (real_s)(3 * v), (real_s)0};
        vel[v] = real_s4{(real_s)(-v), (real_s)0.5, (real_s)v, (real_s)0};
        ids[v] = 7u * (unsigned)v + 1u;
    }
    std::vector<int> flags(8, 0);
    flags[FLAG_ALWAYS] = 1;

    Consts c{};
    c.n = large ? (1 << 27) : n;
    c.n_cells = n_cells;
    Bufs b{};
    b.pos = pos.data();
    b.vel = vel.data();
    b.ids = ids.data();
    b.pos2 = pos2.data();
    b.vel2 = vel2.data();
    b.ids2 = ids2.data();
    b.order = order.data();
    b.slot = slot.data();
    b.cell_start = cell_start.data();
    b.flags = flags.data();
    g_c = &c;
    g_b = &b;
    // The launch (Over::CellWarps): a warp per cell in blocks of BLOCK.
    emu_launch((n_cells * 32 + BLOCK - 1) / BLOCK, BLOCK, sort_cells);

    int problems = 0;
    for (int k = 0; k < n_cells; k++) {
        int s = cell_start[k], e = cell_start[k + 1];
        std::vector<unsigned int> want(order.begin() + s, order.begin() + e);
        auto key = [&](unsigned v) {
            return large ? (unsigned long long)v
                         : ((unsigned long long)((unsigned)slot[v] >> SLOT_BITS) << 32) | (unsigned long long)v;
        };
        std::sort(want.begin(), want.end(), [&](unsigned p, unsigned q) { return key(p) < key(q); });
        for (int r = 0; r < e - s; r++) {
            unsigned v = want[r];
            bool ok = ids2[s + r] == ids[v] && pos2[s + r].x == pos[v].x && pos2[s + r].z == pos[v].z &&
                      vel2[s + r].x == vel[v].x && vel2[s + r].z == vel[v].z;
            if (!ok && problems++ < 10)
                fprintf(stderr, "cell %d (%d atoms): place %d holds id %u, not atom %u's %u\n", k, e - s, r,
                        ids2[s + r], v, ids[v]);
        }
    }
    printf("cells %d atoms %d largest %d key %s problems %d\n", n_cells, n,
           *std::max_element(pops.begin(), pops.end()), large ? "index" : "sub-cell, index", problems);
    return problems ? 1 : 0;
}
