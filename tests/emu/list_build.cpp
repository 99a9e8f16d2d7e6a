// Runs the CUDA neighbour-list build (nlist_build, kernels/cells.cu, compiled on the host with
// warp.h) on a jittered FCC system and checks every list against a brute-force search in
// f64: the atoms within the list range (pairs within 1e-4 sigma^2 of it may go either way),
// no duplicates, in stream order (neighbour cell 0..26, then sorted place), the last pack
// padded with the atom itself, and with an overflow (max_nbrs too small) the first max_nbrs
// of them, the overflow flag and the largest count seen. With NZ (optional) the box is NZ
// lattice cells deep along z, and a depth that holds two list cells but not three is one cell
// deep (a column, as CellSetup::for_lists makes a thin slab), its pairs taking their minimum
// image along z. Prints one summary line; exits 1 with the first problems on stderr.
//   list_build NL WIDE MAX_NBRS WALLS SEED JITTER RANGE [NZ]
#include <cstdio>
#include <map>
#include <numeric>
#include <random>
#include <vector>

static const Consts* g_c;
static const Bufs* g_b;
static void build() {
    bool column = false;
    for (int k = 0; k < 3; k++) column |= g_c->periodic[k] && g_c->cell_dims[k] == 1;
    if (column) {
        if (g_c->list_wide) nlist_build_wide_column(*g_c, *g_b, FLAG_ALWAYS);
        else nlist_build_column(*g_c, *g_b, FLAG_ALWAYS);
    } else if (g_c->list_wide) nlist_build_wide(*g_c, *g_b, FLAG_ALWAYS);
    else nlist_build(*g_c, *g_b, FLAG_ALWAYS);
}

static int problems = 0;
#define CHECK(cond, ...)                                                                                            \
    do {                                                                                                            \
        if (!(cond)) {                                                                                              \
            if (problems++ < 10) {                                                                                  \
                fprintf(stderr, __VA_ARGS__);                                                                       \
                fprintf(stderr, "\n");                                                                              \
            }                                                                                                       \
        }                                                                                                           \
    } while (0)

int main(int argc, char** argv) {
    if (argc != 8 && argc != 9) {
        fprintf(stderr, "usage: list_build NL WIDE MAX_NBRS WALLS SEED JITTER RANGE [NZ]\n");
        return 2;
    }
    int nl = atoi(argv[1]), wide = atoi(argv[2]), max_nbrs = atoi(argv[3]), walls = atoi(argv[4]);
    unsigned seed = (unsigned)atoi(argv[5]);
    double jitter = atof(argv[6]), rl = atof(argv[7]);
    int nz = argc == 9 ? atoi(argv[8]) : nl;
    double a = cbrt(4.0 / 0.8442), band = 1e-4;
    double Ls[3] = {nl * a, nl * a, nz * a};

    // A jittered FCC lattice; with WALLS the y axis is walled (atoms kept 0.3 from its ends).
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> U(-1.0, 1.0);
    const double basis[4][3] = {{0, 0, 0}, {0.5, 0.5, 0}, {0.5, 0, 0.5}, {0, 0.5, 0.5}};
    std::vector<double> xs;
    for (int i = 0; i < nl; i++)
        for (int j = 0; j < nl; j++)
            for (int k = 0; k < nz; k++)
                for (auto& bs : basis) {
                    double p[3] = {(i + bs[0]) * a, (j + bs[1]) * a, (k + bs[2]) * a};
                    for (int d = 0; d < 3; d++) {
                        double L = Ls[d];
                        double v = p[d] + jitter * U(rng);
                        if (walls && d == 1) {
                            v = std::min(std::max(v, 0.3), L - 0.3);
                        } else {
                            v = fmod(v, L);
                            if (v < 0) v += L;
                            if (v >= L) v -= L;
                        }
                        xs.push_back(v);
                    }
                }
    int n = (int)xs.size() / 3;

    Consts c{};
    for (int k = 0; k < 3; k++) {
        double L = Ls[k];
        c.lo[k] = 0;
        c.hi[k] = L;
        c.len[k] = L;
        c.periodic[k] = !(walls && k == 1);
        c.inv_len[k] = c.periodic[k] ? 1 / L : 0;
        c.len_f[k] = (float)L;
        c.half_f[k] = c.periodic[k] ? (float)(L / 2) : 1e30f;
        c.half_len[k] = c.periodic[k] ? L / 2 : 1e30;
        c.cell_dims[k] = std::max(1, (int)floor(L / rl));
        if (c.periodic[k] && c.cell_dims[k] == 2) c.cell_dims[k] = 1;
        c.cell_inv[k] = c.cell_dims[k] / L;
    }
    c.n = n;
    c.r_list_sq = rl * rl;
    c.r_list_sq_f = (float)(rl * rl);
    c.max_nbrs = max_nbrs;
    c.list_wide = wide;
    c.n_cells = c.cell_dims[0] * c.cell_dims[1] * c.cell_dims[2];
    const int* dims = c.cell_dims;

    // Atoms sorted by cell (cell_rank: the identity order), then by index, as cells_sort leaves them.
    auto coords = [&](double x, double y, double z, int cc[3]) {
        real_s4 p{(real_s)x, (real_s)y, (real_s)z, 0};
        cell_coords(c, p, cc);
    };
    std::vector<int> cell(n), idx(n);
    for (int i = 0; i < n; i++) {
        int cc[3];
        coords(xs[3 * i], xs[3 * i + 1], xs[3 * i + 2], cc);
        cell[i] = (cc[2] * dims[1] + cc[1]) * dims[0] + cc[0];
    }
    std::iota(idx.begin(), idx.end(), 0);
    std::stable_sort(idx.begin(), idx.end(), [&](int p, int q) { return cell[p] < cell[q]; });
    std::vector<real_s4> pos(n);
    std::vector<real_f4> posf(n), pos_build(n);
    std::vector<int> scell(n);
    for (int s = 0; s < n; s++) {
        int i = idx[s];
        pos[s] = real_s4{(real_s)xs[3 * i], (real_s)xs[3 * i + 1], (real_s)xs[3 * i + 2], 0};
        posf[s] = real_f4{(real_f)pos[s].x, (real_f)pos[s].y, (real_f)pos[s].z, 0};
        scell[s] = cell[i];
    }
    std::vector<int> cell_start(c.n_cells + 1, 0), cell_rank(c.n_cells), cell_of(n, -1), ncount(n, -1),
        nb_first(c.n_cells * 27, -1), flags(8, 0);
    for (int s = 0; s < n; s++) cell_start[scell[s] + 1]++;
    for (int k = 0; k < c.n_cells; k++) cell_start[k + 1] += cell_start[k];
    std::iota(cell_rank.begin(), cell_rank.end(), 0);
    std::vector<unsigned char> nlist((size_t)n * max_nbrs * (wide ? 4 : 2), 0xAB);

    Bufs b{};
    b.pos = pos.data();
    b.posf = PRECISION == 1 ? posf.data() : (real_f4*)pos.data();
    b.pos_build = pos_build.data();
    b.cell_start = cell_start.data();
    b.cell_rank = cell_rank.data();
    b.cell_of = cell_of.data();
    b.ncount = ncount.data();
    b.nb_first = nb_first.data();
    b.flags = flags.data();
    b.nlist = nlist.data();
    flags[FLAG_ALWAYS] = 1;

    // The launch (Over::BuildWarps): one warp per cell in blocks of NB_BLOCK, warp by warp.
    g_c = &c;
    g_b = &b;
    emu_launch((c.n_cells * 32 + NB_BLOCK - 1) / NB_BLOCK, NB_BLOCK, build);

    // Brute force in f64 (minimum image on periodic axes), each neighbour keyed by its stream
    // place: neighbour cell t (dz, dy, dx from -1 to 1, dx fastest) of the atom's cell, then index.
    auto stream_key = [&](int i, int j) {
        int ci[3] = {scell[i] % dims[0], scell[i] / dims[0] % dims[1], scell[i] / (dims[0] * dims[1])};
        int cj[3] = {scell[j] % dims[0], scell[j] / dims[0] % dims[1], scell[j] / (dims[0] * dims[1])};
        int t = 0, m = 1;
        for (int k = 0; k < 3; k++, m *= 3) {
            int d = cj[k] - ci[k];
            if (c.periodic[k]) d -= dims[k] * (int)std::lround((double)d / dims[k]);
            t += (d + 1) * m;
        }
        return (long long)t * n + j;
    };
    int strict_max = 0, loose_max = 0;
    long long total = 0;
    bool any_over = false;
    for (int i = 0; i < n; i++) {
        // Within range for sure (true), or within the band (false).
        std::map<long long, bool> expect;
        int strict = 0;
        for (int j = 0; j < n; j++) {
            if (j == i) continue;
            double r2 = 0, pi[3] = {(double)pos[i].x, (double)pos[i].y, (double)pos[i].z},
                   pj[3] = {(double)pos[j].x, (double)pos[j].y, (double)pos[j].z};
            for (int k = 0; k < 3; k++) {
                double d = pi[k] - pj[k];
                if (c.periodic[k]) d -= Ls[k] * rint(d / Ls[k]);
                r2 += d * d;
            }
            if (r2 < rl * rl + band) {
                bool sure = r2 < rl * rl - band;
                expect[stream_key(i, j)] = sure;
                strict += sure;
            }
        }
        strict_max = std::max(strict_max, strict);
        loose_max = std::max(loose_max, (int)expect.size());
        if ((int)expect.size() > max_nbrs) any_over = true;

        // The list as built: each entry decoded to an atom, in order.
        int cnt = ncount[i];
        CHECK(cnt >= 0 && cnt <= max_nbrs, "atom %d: ncount %d outside 0..%d", i, cnt, max_nbrs);
        if (cnt < 0 || cnt > max_nbrs) continue;
        total += cnt;
        auto entry = [&](int k) {
            size_t at = ((size_t)(k / 8) * n + i) * 8 + k % 8;
            return wide ? ((unsigned*)nlist.data())[at] : (unsigned)((unsigned short*)nlist.data())[at];
        };
        auto atom_of = [&](unsigned e) {
            return wide ? (int)e : nb_first[scell[i] * 27 + (e >> LIST16_SHIFT)] + (int)(e & (LIST16_PLACES - 1));
        };
        auto it = expect.begin();
        for (int k = 0; k < cnt; k++) {
            int j = atom_of(entry(k));
            CHECK(j >= 0 && j < n && j != i, "atom %d: entry %d names atom %d", i, k, j);
            if (j < 0 || j >= n || j == i) break;
            long long key = stream_key(i, j);
            // Band neighbours may be left out; nothing sure may be skipped.
            while (it != expect.end() && it->first < key && !it->second) ++it;
            CHECK(it != expect.end() && it->first == key,
                  "atom %d: entry %d (atom %d) is out of range, repeated or out of stream order", i, k, j);
            if (it == expect.end() || it->first != key) break;
            ++it;
        }
        if (cnt < max_nbrs) {
            while (it != expect.end() && !it->second) ++it;
            CHECK(it == expect.end(), "atom %d: %d entries, atom %lld (within range) missing", i, cnt, it->first % n);
        }
        // The last pack padded with the atom itself.
        unsigned self = wide ? (unsigned)i : (unsigned)(13 << LIST16_SHIFT | (i - cell_start[scell[i]]));
        for (int k = cnt; k < (cnt + 7) / 8 * 8; k++)
            CHECK(entry(k) == self, "atom %d: padding entry %d is %u, not the atom itself", i, k, entry(k));
        CHECK(cell_of[i] == scell[i], "atom %d: cell_of %d, not %d", i, cell_of[i], scell[i]);
        CHECK(memcmp(&pos_build[i], &b.posf[i], sizeof(real_f4)) == 0, "atom %d: pos_build is not its position", i);
    }
    CHECK(!any_over || flags[FLAG_OVERFLOW], "a list overflowed (%d > %d) but the flag is clear", loose_max, max_nbrs);
    CHECK(strict_max <= max_nbrs || flags[FLAG_OVERFLOW], "overflow flag clear at %d > %d", strict_max, max_nbrs);
    CHECK(loose_max > max_nbrs || !flags[FLAG_OVERFLOW], "overflow flag set with every list within %d", max_nbrs);
    CHECK(flags[FLAG_MAX_NBRS_SEEN] >= strict_max && flags[FLAG_MAX_NBRS_SEEN] <= loose_max,
          "largest count seen %d, brute force %d..%d", flags[FLAG_MAX_NBRS_SEEN], strict_max, loose_max);
    CHECK(!flags[FLAG_CELL_FULL], "cell-full flag set");
    printf("atoms %d cells %d per cell %.1f mean list %.2f max seen %d overflow %d problems %d\n", n, c.n_cells,
           (double)n / c.n_cells, (double)total / n, flags[FLAG_MAX_NBRS_SEEN], flags[FLAG_OVERFLOW], problems);
    return problems ? 1 : 0;
}
