//! The view's side of the app: the box as the simulation has it, the camera and its fit
//! around the overlay's legends, and what the renderer draws each frame (positions, shared
//! slot, geometry; the replay's stored frame while the timeline shows one).

use super::*;

impl App {
    /// The box as the simulation has it now (the scene's until the first status).
    pub fn sim_box(&self) -> SimBox {
        self.status.as_ref().map(|s| s.sim_box).unwrap_or_else(|| self.scene.sim_box())
    }

    /// What the view's overlay shows now (legends, scale bar).
    pub fn overlay_content(&self) -> Content {
        let species: Vec<String> = self.params.species.iter().map(|s| s.name.clone()).collect();
        Content::of(&self.settings.view, &species, &self.dye.legend())
    }

    /// Frames the whole tank in the current camera mode, leaving a strip beside or under it
    /// for the legend and scale bar (`render::overlay_layout`).
    pub fn fit_camera(&mut self) {
        let b = self.sim_box();
        let content = self.overlay_content();
        let (mode, radius) = (self.settings.camera_mode, self.settings.view.radius);
        self.camera = overlay_layout::fit_camera(mode, &b, self.view_rect, self.view_size, &content, radius);
        self.fitted_camera = Some(self.camera);
        self.fitted_overlay = Some(content);
    }

    /// Fits again when the overlay's content changed since the last fit and the camera is
    /// where that fit left it (the view calls this each frame).
    pub fn refit_for_overlay(&mut self) {
        if self.fitted_camera == Some(self.camera) && self.fitted_overlay.as_ref() != Some(&self.overlay_content()) {
            self.fit_camera();
        }
    }

    /// The view is now `size` pixels: fitted again when it is the first size or the camera
    /// is where the last fit left it (the panels settling in the first frames, a resized
    /// window), else the user's camera is kept.
    pub fn view_resized(&mut self, size: [u32; 2]) {
        let first = self.view_size == [1, 1];
        self.view_size = size;
        if first || self.fitted_camera == Some(self.camera) {
            self.fit_camera();
        }
    }

    pub fn set_camera_mode(&mut self, mode: CameraMode) {
        self.settings.camera_mode = mode;
        self.fit_camera();
    }

    /// The newest positions (host frame or shared slot) and geometry with their sequence
    /// numbers, for the renderer.
    #[allow(clippy::type_complexity)]
    pub fn view_data(
        &mut self,
    ) -> (Option<(u64, PositionFrame)>, (u64, SceneGeometry), Option<(u64, wgpu::Buffer, u32)>) {
        // The piston comes with the telemetry; the top wall is redrawn when it moved visibly.
        let piston = self.last_telemetry.as_ref().and_then(|t| t.piston).map(|p| p.height);
        let moved = match (piston, self.geometry.1.2) {
            (Some(a), Some(b)) => (a - b).abs() > 1e-3,
            (a, b) => a.is_some() != b.is_some(),
        };
        if std::mem::take(&mut self.pending_scene) || moved {
            let b = self.sim_box();
            self.geometry = (self.geometry.0 + 1, Arc::new((b, self.shapes.clone(), piston)));
        }
        let mut external = None;
        if let Some(i) = &self.interop
            && let Some(f) = i.slots.acquire(self.gpu_frame)
        {
            if f.seq != self.last_slot_seq {
                self.last_slot_seq = f.seq;
                self.last_slot_change = Some(Instant::now());
            }
            // Draw the shared slot unless host frames for display arrived since it changed
            // (the simulation went back to host staging).
            if self.last_slot_change >= self.last_host_display {
                self.frame_step = f.step;
                external = Some((f.seq, i.buffers[f.slot].clone(), f.n_atoms as u32));
            }
        }
        self.replay_view((self.frame.clone().map(|f| (self.frame_seq, f)), self.geometry.clone(), external))
    }

    /// Marks the obstacle geometry as changed (the renderer rebuilds it next frame).
    pub fn geometry_changed(&mut self) {
        self.pending_scene = true;
    }
}
