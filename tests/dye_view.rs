//! Dye in the view (issue 47): a render on lavapipe (or any adapter) of tagged and untagged
//! atoms coloured by dye, through the triangle path and, where the device has it, the splat
//! path: a tagged atom is drawn in its source's colour (`render::colour::dye_colour`, the
//! shader's table), an untagged one dimmed (dark grey), in light grey when untagged atoms
//! show normally, and not at all when they are hidden. Without any GPU adapter the test prints
//! why and passes, unless `ARGON_REQUIRE_RENDER` is set (CI sets it).

use argon_sandbox::physics::sim_box::SimBox;
use argon_sandbox::render::colour::dye_colour;
use argon_sandbox::render::offscreen::{COLOUR_FORMAT, Gpu, Offscreen};
use argon_sandbox::render::{Camera, CameraMode, ColourBy, Renderer, SplatMode, Untagged, ViewSettings};

fn gpu() -> Option<Gpu> {
    match Gpu::headless_with(argon_sandbox::render::wanted_features) {
        Ok(g) => Some(g),
        Err(e) => {
            assert!(
                std::env::var_os("ARGON_REQUIRE_RENDER").is_none(),
                "ARGON_REQUIRE_RENDER is set but no adapter: {e}"
            );
            eprintln!("skipped: no GPU adapter for rendering ({e})");
            None
        }
    }
}

fn srgb_to_linear(c: u8) -> f32 {
    let c = c as f32 / 255.0;
    if c <= 0.04045 { c / 12.92 } else { ((c + 0.055) / 1.055).powf(2.4) }
}

/// The cosine between a pixel's linear colour and `want`: 1 for the same hue and saturation
/// at any brightness (the shading scales the base colour; its highlight is off-centre).
fn likeness(px: [u8; 3], want: [f32; 3]) -> f32 {
    let p = px.map(srgb_to_linear);
    let dot: f32 = (0..3).map(|k| p[k] * want[k]).sum();
    let norm = |v: [f32; 3]| v.iter().map(|x| x * x).sum::<f32>().sqrt();
    dot / (norm(p) * norm(want)).max(1e-9)
}

#[test]
fn tagged_atoms_take_their_sources_colour_and_untagged_ones_are_dimmed_hidden_or_normal() {
    let Some(gpu) = gpu() else { return };
    eprintln!("rendering on {}", gpu.describe());
    let b = SimBox::new([12.0, 6.0, 2.0], [true, true, true]);
    // Four atoms in a row (x, y, z, tag): sources 1 and 2, an untagged one, and source 7 (the
    // palette repeats after six, so it is source 1's colour).
    let atoms: Vec<[f32; 4]> =
        vec![[2.0, 3.0, 1.0, 1.0], [5.0, 3.0, 1.0, 2.0], [8.0, 3.0, 1.0, 0.0], [10.5, 3.0, 1.0, 7.0]];
    let size = [480, 240];
    let camera = Camera::fit(CameraMode::Front, &b, size[0] as f32 / size[1] as f32);
    let target = Offscreen::new(&gpu.device, size).unwrap();
    let mut renderer = Renderer::new(&gpu.device, COLOUR_FORMAT);
    renderer.set_scene(&gpu.device, &b, &[]);
    renderer.upload_atoms(&gpu.device, &gpu.queue, &atoms);
    let mut paths = vec![SplatMode::Never];
    if argon_sandbox::render::splat::Splat::supported(&gpu.device) {
        paths.push(SplatMode::Always);
    }
    let at = |rgba: &[u8], p: [f32; 2]| {
        let s = camera.tank_to_screen(p, size);
        // Left of and below the centre: away from the highlight (up and right).
        let (x, y) = ((s[0] - 3.0) as usize, (s[1] + 3.0) as usize);
        let i = 4 * (y * size[0] as usize + x);
        [rgba[i], rgba[i + 1], rgba[i + 2]]
    };
    eprintln!("drawing through {paths:?}");
    for path in paths {
        renderer.splat_mode = path;
        let draw = |renderer: &mut Renderer, untagged: Untagged| {
            let settings = ViewSettings {
                colour_by: ColourBy::Dye,
                range: ColourBy::Dye.default_range(1.0, [0.0, 6.0]),
                untagged,
                radius: 0.5,
                show_walls: false,
                ..ViewSettings::default()
            };
            target.draw(&gpu, renderer, &camera, &settings);
            target.read_rgba(&gpu).unwrap()
        };
        let dimmed = draw(&mut renderer, Untagged::Dimmed);
        assert!(renderer.splats() == (path == SplatMode::Always), "{path:?}: the path asked for did not draw");
        let background = at(&dimmed, [6.5, 5.5]);
        for (p, tag) in [([2.0, 3.0], 1), ([5.0, 3.0], 2), ([10.5, 3.0], 7)] {
            let px = at(&dimmed, p);
            let like = likeness(px, dye_colour(tag));
            assert!(like > 0.99, "{path:?}: the atom of source {tag} is {px:?}, not its colour (likeness {like:.3})");
            assert!(px.iter().map(|&c| c as u32).sum::<u32>() > 150, "{path:?}: source {tag}'s atom is dark: {px:?}");
        }
        assert!(likeness(at(&dimmed, [5.0, 3.0]), dye_colour(1)) < 0.5, "sources 1 and 2 look alike");
        let dim = at(&dimmed, [8.0, 3.0]);
        let spread = dim.iter().max().unwrap() - dim.iter().min().unwrap();
        assert!(
            dim != background && *dim.iter().max().unwrap() < 90 && spread < 16,
            "{path:?}: untagged dimmed: {dim:?}"
        );
        let normal = at(&draw(&mut renderer, Untagged::Normal), [8.0, 3.0]);
        let spread = normal.iter().max().unwrap() - normal.iter().min().unwrap();
        assert!(*normal.iter().min().unwrap() > 110 && spread < 16, "{path:?}: untagged normal: {normal:?}");
        let hidden = draw(&mut renderer, Untagged::Hidden);
        assert_eq!(at(&hidden, [8.0, 3.0]), background, "{path:?}: a hidden untagged atom was drawn");
        assert_eq!(at(&hidden, [2.0, 3.0]), at(&dimmed, [2.0, 3.0]), "{path:?}: hiding untagged atoms hid dye");
    }
}
