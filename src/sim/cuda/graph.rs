//! CUDA graphs of time steps: a chain of kernel nodes built from [`Call`]s, instantiated once
//! and launched as one unit, so a step costs the GPU's own launch latency instead of the
//! host's. The neighbour-list rebuild sits in a conditional IF node whose flag the step's
//! first kernel sets from the skin test, so steps without a rebuild skip it entirely. Owns
//! the raw driver calls for graphs and the small conditional-kernel module.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use cudarc::driver::{CudaFunction, CudaStream, sys};

use super::device::Device;
use super::launch::Call;
use super::source;
use crate::sim::SimError;

fn check(r: sys::CUresult, what: &str) -> Result<(), SimError> {
    r.result().map_err(|e| SimError::Device(format!("{what}: {e}")))
}

/// `step_begin_if` of kernels/graph.cu for `dev`, compiled once per device; None when NVRTC or
/// the driver cannot provide it (conditional nodes need CUDA 12.3), and graphs then hold the
/// gated rebuild kernels inline.
pub fn conditional_kernel(dev: &Device) -> Option<Arc<CudaFunction>> {
    type Cache = Mutex<Option<HashMap<usize, Option<Arc<CudaFunction>>>>>;
    static CACHE: Cache = Mutex::new(None);
    let mut cache = CACHE.lock().unwrap_or_else(|e| e.into_inner());
    let map = cache.get_or_insert_with(HashMap::new);
    map.entry(dev.ordinal)
        .or_insert_with(|| {
            let ptx = source::compile_graph_kernel(dev.arch).ok()?;
            let module = dev.ctx.load_module(ptx).ok()?;
            module.load_function("step_begin_if").ok().map(Arc::new)
        })
        .clone()
}

/// An instantiated graph (and the graph it came from).
pub struct StepGraph {
    graph: sys::CUgraph,
    exec: sys::CUgraphExec,
}

// SAFETY: graph handles are used from one thread at a time (the engine's owner); the driver
// objects themselves are not tied to a thread.
unsafe impl Send for StepGraph {}

impl StepGraph {
    pub fn launch(&self, stream: &CudaStream) -> Result<(), SimError> {
        // SAFETY: a live executable graph and stream of the current context.
        check(unsafe { sys::cuGraphLaunch(self.exec, stream.cu_stream()) }, "launching a step graph")
    }
}

impl Drop for StepGraph {
    fn drop(&mut self) {
        // SAFETY: both handles were created by Builder::instantiate and are destroyed once.
        unsafe {
            let _ = sys::cuGraphExecDestroy(self.exec);
            let _ = sys::cuGraphDestroy(self.graph);
        }
    }
}

/// Builds a graph as a chain: every node depends on the one added before it. A direct
/// builder launches each call at once instead, so one sequence of calls serves both.
pub struct Builder<'a> {
    graph: sys::CUgraph,
    last: Option<sys::CUgraphNode>,
    /// Top-level graphs are destroyed by their builder or StepGraph; a conditional node's
    /// body belongs to its node.
    owned: bool,
    direct: Option<&'a CudaStream>,
}

impl<'a> Builder<'a> {
    pub fn new() -> Result<Builder<'a>, SimError> {
        let mut graph = std::ptr::null_mut();
        // SAFETY: out-pointer to a fresh graph.
        check(unsafe { sys::cuGraphCreate(&mut graph, 0) }, "creating a step graph")?;
        Ok(Builder { graph, last: None, owned: true, direct: None })
    }

    /// A builder that launches every call on `stream` as it is added.
    pub fn direct(stream: &'a CudaStream) -> Builder<'a> {
        Builder { graph: std::ptr::null_mut(), last: None, owned: false, direct: Some(stream) }
    }

    pub fn is_graph(&self) -> bool {
        self.direct.is_none()
    }

    /// Adds (or launches) a call; None (no work, e.g. zero atoms) adds nothing.
    pub fn add(&mut self, call: Option<Call>) -> Result<(), SimError> {
        match (call, self.direct) {
            (None, _) => Ok(()),
            (Some(c), Some(stream)) => c.launch(stream),
            (Some(c), None) => self.kernel(c),
        }
    }

    fn deps(&self) -> (*const sys::CUgraphNode, usize) {
        match &self.last {
            Some(n) => (n as *const sys::CUgraphNode, 1),
            None => (std::ptr::null(), 0),
        }
    }

    /// Appends a kernel node (the driver copies the arguments).
    fn kernel(&mut self, mut call: Call) -> Result<(), SimError> {
        let mut params = call.params();
        let p = sys::CUDA_KERNEL_NODE_PARAMS {
            func: call.func,
            gridDimX: call.grid,
            gridDimY: 1,
            gridDimZ: 1,
            blockDimX: call.block,
            blockDimY: 1,
            blockDimZ: 1,
            sharedMemBytes: 0,
            kernelParams: params.as_mut_ptr(),
            extra: std::ptr::null_mut(),
            kern: std::ptr::null_mut(),
            ctx: std::ptr::null_mut(),
        };
        let (deps, n) = self.deps();
        let mut node = std::ptr::null_mut();
        // SAFETY: `params` points at argument bytes matching the kernel, alive for the call.
        let r = unsafe { sys::cuGraphAddKernelNode_v2(&mut node, self.graph, deps, n, &p) };
        check(r, &format!("adding {} to a step graph", call.name))?;
        self.last = Some(node);
        Ok(())
    }

    /// A conditional handle of this graph (reset to 0 at every launch).
    pub fn condition(&mut self, ctx: sys::CUcontext) -> Result<sys::CUgraphConditionalHandle, SimError> {
        let mut h = 0;
        // SAFETY: out-pointer; the graph is alive. Flag 1: CU_GRAPH_COND_ASSIGN_DEFAULT.
        let r = unsafe { sys::cuGraphConditionalHandleCreate(&mut h, self.graph, ctx, 0, 1) };
        check(r, "creating a graph condition")?;
        Ok(h)
    }

    /// Appends an IF node on `handle` and returns a builder for its body.
    pub fn if_node(
        &mut self,
        ctx: sys::CUcontext,
        handle: sys::CUgraphConditionalHandle,
    ) -> Result<Builder<'a>, SimError> {
        // SAFETY: a zeroed parameter union is the documented starting point.
        let mut p: sys::CUgraphNodeParams = unsafe { std::mem::zeroed() };
        p.type_ = sys::CUgraphNodeType::CU_GRAPH_NODE_TYPE_CONDITIONAL;
        p.__bindgen_anon_1.conditional = sys::CUDA_CONDITIONAL_NODE_PARAMS {
            handle,
            type_: sys::CUgraphConditionalNodeType::CU_GRAPH_COND_TYPE_IF,
            size: 1,
            phGraph_out: std::ptr::null_mut(),
            ctx,
        };
        let (deps, n) = self.deps();
        let mut node = std::ptr::null_mut();
        // SAFETY: valid parameters; the driver fills phGraph_out with an array it owns.
        check(
            unsafe { sys::cuGraphAddNode_v2(&mut node, self.graph, deps, std::ptr::null(), n, &mut p) },
            "adding a conditional node",
        )?;
        self.last = Some(node);
        // SAFETY: the union member written above; phGraph_out now holds `size` graphs.
        let body = unsafe { *p.__bindgen_anon_1.conditional.phGraph_out };
        Ok(Builder { graph: body, last: None, owned: false, direct: None })
    }

    pub fn instantiate(mut self) -> Result<StepGraph, SimError> {
        let mut exec = std::ptr::null_mut();
        // SAFETY: a complete graph; out-pointer.
        let r = unsafe { sys::cuGraphInstantiateWithFlags(&mut exec, self.graph, 0) };
        check(r, "instantiating a step graph")?;
        let graph = std::mem::replace(&mut self.graph, std::ptr::null_mut());
        Ok(StepGraph { graph, exec })
    }
}

impl Drop for Builder<'_> {
    fn drop(&mut self) {
        if self.owned && !self.graph.is_null() {
            // SAFETY: a graph this builder created and did not hand to a StepGraph.
            let _ = unsafe { sys::cuGraphDestroy(self.graph) };
        }
    }
}

/// Instantiated graphs by key, at most `capacity` of them: a new one past that replaces the
/// least recently launched. Building a graph costs milliseconds and may wait for the GPU to
/// drain (2 to 45 ms measured on an H200 while the app ran), so the shapes a run keeps
/// meeting must stay: the app's chunks, sized to the display, start and end at any step.
pub struct GraphCache<K> {
    graphs: HashMap<K, (StepGraph, u64)>,
    capacity: usize,
    tick: u64,
    /// Graphs built since the cache was made (for `bench` and tests).
    pub built: u64,
}

impl<K: std::hash::Hash + Eq + Copy> GraphCache<K> {
    pub fn new(capacity: usize) -> Self {
        GraphCache { graphs: HashMap::new(), capacity: capacity.max(1), tick: 0, built: 0 }
    }

    pub fn contains(&self, key: &K) -> bool {
        self.graphs.contains_key(key)
    }

    /// Drops every graph (constants or buffers they hold by value changed).
    pub fn clear(&mut self) {
        self.graphs.clear();
    }

    /// Keeps `graph` for `key`, first dropping the least recently used one when full.
    pub fn insert(&mut self, key: K, graph: StepGraph) {
        if self.graphs.len() >= self.capacity
            && !self.graphs.contains_key(&key)
            && let Some(oldest) = self.graphs.iter().min_by_key(|(_, (_, used))| *used).map(|(k, _)| *k)
        {
            self.graphs.remove(&oldest);
        }
        self.built += 1;
        self.tick += 1;
        self.graphs.insert(key, (graph, self.tick));
    }

    /// The graph for `key`, marked as used now.
    pub fn get(&mut self, key: &K) -> Option<&StepGraph> {
        self.tick += 1;
        let tick = self.tick;
        self.graphs.get_mut(key).map(|(g, used)| {
            *used = tick;
            &*g
        })
    }
}
