//! Cameras on the tank: the front orthographic view (default, for drawing: x right, y up,
//! looking along -z) and an orbit perspective view (drag to rotate, wheel to zoom), with
//! fit-to-tank and the screen <-> tank-plane conversions that picking and drawing use.
//!
//! Pure math (glam); no GPU resources.

use glam::{Mat4, Vec3, Vec4};

use crate::physics::sim_box::SimBox;

/// How the tank is looked at.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum CameraMode {
    /// Orthographic, looking along -z at the x-y plane.
    Front,
    /// Perspective, orbiting the tank centre.
    Orbit,
}

/// A camera and the tank it frames.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Camera {
    pub mode: CameraMode,
    /// Centre of the view (tank coordinates, sigma).
    pub target: [f32; 3],
    /// Front view: half the visible height (sigma). Orbit: distance to the target.
    pub zoom: f32,
    /// Orbit angles (radians): about y, then elevation.
    pub yaw: f32,
    pub pitch: f32,
    /// Depth (z) of the drawing plane (the tank's mid-depth).
    pub plane_z: f32,
    /// Largest tank extent, for near/far planes.
    pub extent: f32,
}

/// Vertical field of view of the orbit camera.
const FOV_Y: f32 = 0.7;

impl Camera {
    /// A camera of `mode` framing the whole tank at aspect ratio `aspect` (width / height).
    pub fn fit(mode: CameraMode, b: &SimBox, aspect: f32) -> Camera {
        Camera::fit_in(mode, b, aspect, [0.0, 0.0, 1.0, 1.0])
    }

    /// A camera of `mode` framing the whole tank inside the part `free` of a view of aspect
    /// ratio `aspect`: `[x0, y0, x1, y1]` as fractions of the view's width and height, origin
    /// top-left (the rest is kept for the legend and scale bar, `render::overlay_layout`).
    /// The front camera centres the tank in `free` (its target moves off the tank's centre);
    /// the orbit camera keeps the tank's centre in the middle of the view, where it turns
    /// about it, and fits the box inside the largest rectangle centred there that lies in
    /// `free` (a strip kept at one side is kept at the other side too).
    pub fn fit_in(mode: CameraMode, b: &SimBox, aspect: f32, free: [f32; 4]) -> Camera {
        let lo = Vec3::new(b.lo[0] as f32, b.lo[1] as f32, b.lo[2] as f32);
        let hi = Vec3::new(b.hi[0] as f32, b.hi[1] as f32, b.hi[2] as f32);
        let centre = 0.5 * (lo + hi);
        let size = hi - lo;
        let extent = size.max_element();
        let aspect = aspect.max(1e-3);
        let fw = (free[2] - free[0]).clamp(0.05, 1.0);
        let fh = (free[3] - free[1]).clamp(0.05, 1.0);
        // Front: the view is 2 zoom high and 2 zoom aspect wide (sigma); the box with a 4%
        // margin each side fits `free` along its tighter axis.
        let half_height = 0.5 * (size.y / fh).max(size.x / (fw * aspect)) * 1.08;
        let mut camera = Camera {
            mode,
            target: centre.to_array(),
            zoom: half_height,
            yaw: if mode == CameraMode::Orbit { 0.6 } else { 0.0 },
            pitch: if mode == CameraMode::Orbit { 0.35 } else { 0.0 },
            plane_z: centre.z,
            extent,
        };
        match mode {
            CameraMode::Front => {
                // The tank's centre at the centre of `free` (NDC, y up).
                let ndc_x = free[0] + free[2] - 1.0;
                let ndc_y = 1.0 - (free[1] + free[3]);
                camera.target[0] -= ndc_x * half_height * aspect;
                camera.target[1] -= ndc_y * half_height;
            }
            CameraMode::Orbit => {
                // The nearest distance at which all eight corners of the box fit inside the
                // centred part of `free` of both the vertical and the horizontal field of
                // view, from this direction, plus a margin.
                let half_x = (0.5 - free[0]).min(free[2] - 0.5).clamp(0.025, 0.5) * 2.0;
                let half_y = (0.5 - free[1]).min(free[3] - 0.5).clamp(0.025, 0.5) * 2.0;
                camera.zoom = 1.0;
                let back = camera.eye() - centre;
                let right = Vec3::Y.cross(back).normalize();
                let up = back.cross(right).normalize();
                let tan_y = (0.5 * FOV_Y).tan() * half_y;
                let tan_x = (0.5 * FOV_Y).tan() * aspect * half_x;
                let mut distance: f32 = 0.0;
                for k in 0..8 {
                    let corner = Vec3::new(
                        if k & 1 == 0 { lo.x } else { hi.x },
                        if k & 2 == 0 { lo.y } else { hi.y },
                        if k & 4 == 0 { lo.z } else { hi.z },
                    );
                    let d = corner - centre;
                    let along = d.dot(back);
                    distance = distance.max(along + d.dot(right).abs() / tan_x).max(along + d.dot(up).abs() / tan_y);
                }
                camera.zoom = distance * 1.1;
            }
        }
        camera
    }

    fn eye(&self) -> Vec3 {
        let target = Vec3::from(self.target);
        match self.mode {
            CameraMode::Front => target + Vec3::new(0.0, 0.0, self.extent * 2.0 + 10.0),
            CameraMode::Orbit => {
                let (sy, cy) = self.yaw.sin_cos();
                let (sp, cp) = self.pitch.sin_cos();
                target + self.zoom * Vec3::new(sy * cp, sp, cy * cp)
            }
        }
    }

    pub fn view(&self) -> Mat4 {
        Mat4::look_at_rh(self.eye(), Vec3::from(self.target), Vec3::Y)
    }

    pub fn proj(&self, aspect: f32) -> Mat4 {
        match self.mode {
            CameraMode::Front => {
                let h = self.zoom;
                let w = h * aspect;
                let depth = self.extent * 4.0 + 20.0;
                Mat4::orthographic_rh(-w, w, -h, h, 0.1, depth)
            }
            CameraMode::Orbit => {
                let near = (self.zoom - self.extent * 1.5).max(self.extent * 0.01).max(0.05);
                Mat4::perspective_rh(FOV_Y, aspect, near, self.zoom + self.extent * 2.0)
            }
        }
    }

    /// Screen pixels per sigma at the view's centre for a view `height_px` pixels tall (the
    /// scale of an atom near the target).
    pub fn pixels_per_sigma(&self, height_px: u32) -> f32 {
        let half = match self.mode {
            CameraMode::Front => self.zoom,
            CameraMode::Orbit => self.zoom * (0.5 * FOV_Y).tan(),
        };
        height_px as f32 / (2.0 * half.max(1e-6))
    }

    /// True when the view direction points along -z (the camera sits on the +z side).
    pub fn looks_down_z(&self) -> bool {
        self.eye().z > self.target[2]
    }

    pub fn is_ortho(&self) -> bool {
        self.mode == CameraMode::Front
    }

    /// Pixel (origin top-left) of the tank point (x, y) on the drawing plane.
    pub fn tank_to_screen(&self, p: [f32; 2], size: [u32; 2]) -> [f32; 2] {
        let aspect = size[0] as f32 / size[1] as f32;
        let clip = self.proj(aspect) * self.view() * Vec4::new(p[0], p[1], self.plane_z, 1.0);
        let ndc = clip / clip.w;
        [(ndc.x * 0.5 + 0.5) * size[0] as f32, (0.5 - ndc.y * 0.5) * size[1] as f32]
    }

    /// Pixel (origin top-left) of the 3D point `p` in a view of `size` pixels; None behind the
    /// camera.
    pub fn project(&self, p: [f32; 3], size: [u32; 2]) -> Option<[f32; 2]> {
        let aspect = size[0] as f32 / size[1].max(1) as f32;
        let clip = self.proj(aspect) * self.view() * Vec4::new(p[0], p[1], p[2], 1.0);
        if clip.w <= 1e-6 {
            return None;
        }
        let ndc = clip / clip.w;
        Some([(ndc.x * 0.5 + 0.5) * size[0] as f32, (0.5 - ndc.y * 0.5) * size[1] as f32])
    }

    /// The tank point on the drawing plane under pixel `px` (origin top-left), if the ray
    /// through it meets the plane.
    pub fn screen_to_tank(&self, px: [f32; 2], size: [u32; 2]) -> Option<[f32; 2]> {
        let aspect = size[0] as f32 / size[1] as f32;
        let inv = (self.proj(aspect) * self.view()).inverse();
        let ndc_x = px[0] / size[0] as f32 * 2.0 - 1.0;
        let ndc_y = 1.0 - px[1] / size[1] as f32 * 2.0;
        let unproject = |z: f32| {
            let v = inv * Vec4::new(ndc_x, ndc_y, z, 1.0);
            v.truncate() / v.w
        };
        let (a, b) = (unproject(0.0), unproject(1.0));
        let dir = b - a;
        if dir.z.abs() < 1e-9 {
            return None;
        }
        let t = (self.plane_z - a.z) / dir.z;
        if !t.is_finite() {
            return None;
        }
        let hit = a + t * dir;
        Some([hit.x, hit.y])
    }

    /// Rotates the orbit camera by a drag of (dx, dy) pixels.
    pub fn orbit(&mut self, dx: f32, dy: f32) {
        self.yaw -= dx * 0.008;
        self.pitch = (self.pitch + dy * 0.008).clamp(-1.5, 1.5);
    }

    /// Zooms by `factor` (> 1 moves out).
    pub fn zoom_by(&mut self, factor: f32) {
        self.zoom = (self.zoom * factor).clamp(0.5, 1e5);
    }

    /// Tank length covered by one pixel at the drawing plane (for scale bars).
    pub fn sigma_per_pixel(&self, size: [u32; 2]) -> f32 {
        let a = self.screen_to_tank([0.5 * size[0] as f32, 0.5 * size[1] as f32], size);
        let b = self.screen_to_tank([0.5 * size[0] as f32 + 100.0, 0.5 * size[1] as f32], size);
        match (a, b) {
            (Some(a), Some(b)) => ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2)).sqrt() / 100.0,
            _ => 2.0 * self.zoom / size[1] as f32,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn front_view_round_trip_and_fit() {
        let b = SimBox::new([40.0, 20.0, 6.0], [false, false, true]);
        let cam = Camera::fit(CameraMode::Front, &b, 16.0 / 9.0);
        let size = [1600, 900];
        for p in [[0.0, 0.0], [40.0, 20.0], [13.3, 7.7]] {
            let s = cam.tank_to_screen(p, size);
            assert!(s[0] >= 0.0 && s[0] <= 1600.0 && s[1] >= 0.0 && s[1] <= 900.0, "{p:?} -> {s:?}");
            let q = cam.screen_to_tank(s, size).unwrap();
            assert!((q[0] - p[0]).abs() < 1e-3 && (q[1] - p[1]).abs() < 1e-3, "{p:?} -> {q:?}");
        }
        // y grows upwards on the screen.
        assert!(cam.tank_to_screen([10.0, 15.0], size)[1] < cam.tank_to_screen([10.0, 5.0], size)[1]);
    }

    #[test]
    fn orbit_view_round_trip() {
        let b = SimBox::new([30.0, 30.0, 10.0], [true; 3]);
        let mut cam = Camera::fit(CameraMode::Orbit, &b, 1.5);
        cam.orbit(40.0, -25.0);
        let size = [900, 600];
        for p in [[5.0, 5.0], [25.0, 12.0], [15.0, 28.0]] {
            let q = cam.screen_to_tank(cam.tank_to_screen(p, size), size).unwrap();
            assert!((q[0] - p[0]).abs() < 1e-2 && (q[1] - p[1]).abs() < 1e-2, "{p:?} -> {q:?}");
        }
    }

    #[test]
    fn orbit_fit_shows_the_whole_box_and_fills_the_view() {
        for (dims, aspect) in
            [([40.0, 10.0, 8.0], 16.0 / 9.0), ([10.0, 30.0, 10.0], 16.0 / 9.0), ([20.0, 20.0, 20.0], 0.6)]
        {
            let b = SimBox::new(dims, [false; 3]);
            let cam = Camera::fit(CameraMode::Orbit, &b, aspect);
            let m = cam.proj(aspect) * cam.view();
            let (mut max_x, mut max_y) = (0.0f32, 0.0f32);
            for k in 0..8 {
                let c = Vec3::new(
                    if k & 1 == 0 { 0.0 } else { dims[0] as f32 },
                    if k & 2 == 0 { 0.0 } else { dims[1] as f32 },
                    if k & 4 == 0 { 0.0 } else { dims[2] as f32 },
                );
                let ndc = m.project_point3(c);
                assert!(
                    ndc.x.abs() < 1.0 && ndc.y.abs() < 1.0 && ndc.z > 0.0 && ndc.z < 1.0,
                    "{dims:?}: corner {c} at {ndc}"
                );
                max_x = max_x.max(ndc.x.abs());
                max_y = max_y.max(ndc.y.abs());
            }
            // Tight on at least one axis: the box is not left small in the middle.
            assert!(max_x.max(max_y) > 0.7, "{dims:?}: the box spans only {max_x} x {max_y} of the view");
        }
    }
}
