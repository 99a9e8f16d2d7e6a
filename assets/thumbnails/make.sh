#!/usr/bin/env bash
# Makes the examples gallery's pictures (assets/thumbnails/NAME.png) with `record`, from each
# preset itself: one 480x270 frame, without the legend, after the steps that show what the
# scene is about. `vortex_street` needs a GPU (CUDA); the rest run on the CPU backend.
#   assets/thumbnails/make.sh [NAME...]      (default: all but vortex_street)
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=${ARGON_BIN:-target/release/argon-sandbox}
names=("$@")
[ ${#names[@]} -eq 0 ] && names=(default twin_eddies channel_flow droplet ar_kr_mixture in_lj)
for name in "${names[@]}"; do
    case $name in
        default)       args=(--backend cpu --skip 3000) ;;
        twin_eddies)   args=(--backend cpu --skip 10000 --fields vorticity --field-window 10) ;;
        vortex_street) args=(--backend cuda --skip 150000 --fields vorticity --field-bin 4 --field-window 10) ;;
        channel_flow)  args=(--backend cpu --skip 4000 --fields vx --field-window 5) ;;
        droplet)       args=(--backend cpu --skip 6000) ;;
        ar_kr_mixture) args=(--backend cpu --skip 3000 --colour species) ;;
        in_lj)         args=(--backend cpu --skip 200 --camera orbit) ;;
        *) echo "no recipe for $name" >&2; exit 2 ;;
    esac
    out=$(mktemp -d)
    "$bin" record "$name" --frames 1 --size 480x270 --no-overlay --quiet --out "$out/" "${args[@]}"
    mv "$out"/*.png "assets/thumbnails/$name.png"
    rmdir "$out"
    echo "assets/thumbnails/$name.png"
done
