//! The Vulkan context: one device, one compute queue, an allocator and caches.

use crate::{VkContext, VkError};
use ash::vk;
use gpu_allocator::vulkan::{
    Allocation, AllocationCreateDesc, AllocationScheme, Allocator, AllocatorCreateDesc,
};
use gpu_allocator::MemoryLocation;
use std::collections::HashMap;

type Result<T> = std::result::Result<T, VkError>;

mod instance;
mod pipelines;
pub use instance::{enumerate, validation_messages};
use instance::{has_extension, query_info, shared_instance, Instance};
pub use pipelines::{module_key, PipelineId, PipelineReport, MAX_PIPELINES};
use pipelines::{Pipeline, PipelineKey};

/// What arrc needs to know about a device.
#[derive(Clone, Debug)]
pub struct DeviceInfo {
    pub index: usize,
    pub name: String,
    pub device_type: String,
    pub api_version: String,
    pub driver: String,
    pub subgroup_size: u32,
    pub subgroup_arithmetic: bool,
    /// OpGroupNonUniformShuffle in compute shaders.
    pub subgroup_shuffle: bool,
    pub shader_int64: bool,
    pub shader_float64: bool,
    /// Shaders may ask to keep f64 subnormals (shaderDenormPreserveFloat64).
    pub denorm_preserve_f64: bool,
    /// Shaders may ask to keep f32 subnormals (shaderDenormPreserveFloat32).
    pub denorm_preserve_f32: bool,
    pub subgroup_extended_types: bool,
    /// 64-bit integer atomics on storage buffers (shaderBufferInt64Atomics).
    pub int64_atomics: bool,
    pub full_subgroups: bool,
    pub max_storage_buffer_range: u32,
    /// Storage buffers one compute shader may bind (the least of the per-stage and
    /// per-set limits and the per-stage resources).
    pub max_storage_buffers: u32,
    pub max_workgroup_count: [u32; 3],
    pub max_workgroup_invocations: u32,
    pub max_shared_memory: u32,
    pub timestamp_period_ns: f32,
    /// VK_KHR_pipeline_executable_properties: the driver reports what it compiled
    /// (registers, shared memory, ...) for each pipeline.
    pub pipeline_statistics: bool,
    /// The size of the largest device-local memory heap, in bytes.
    pub device_local_bytes: u64,
    /// The matrix shapes of VK_KHR_cooperative_matrix (empty without it).
    pub cooperative_matrices: Vec<CooperativeMatrix>,
    /// Kernels may use cooperative matrices: the extension's feature, with the
    /// Vulkan memory model and 8-bit integers their modules need.
    pub cooperative_matrix: bool,
    /// VK_KHR_shader_maximal_reconvergence (with the subgroup-uniform control flow
    /// it needs): a kernel may ask that invocations which diverged run together
    /// again where their paths meet, so that a subgroup operation after a branch
    /// sees the whole subgroup.
    pub maximal_reconvergence: bool,
    api: u32,
}

/// One matrix multiply-add a subgroup can do cooperatively (VK_KHR_cooperative_matrix):
/// `M×K` times `K×N` plus `M×N`, with the components' types as Vulkan names them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CooperativeMatrix {
    pub m: u32,
    pub n: u32,
    pub k: u32,
    pub a: String,
    pub b: String,
    pub c: String,
    pub result: String,
    pub saturating: bool,
    pub subgroup_scope: bool,
}

impl std::fmt::Display for CooperativeMatrix {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}x{}x{} {}*{}+{}->{}{}{}",
            self.m,
            self.n,
            self.k,
            self.a,
            self.b,
            self.c,
            self.result,
            if self.saturating { " saturating" } else { "" },
            if self.subgroup_scope {
                ""
            } else {
                " (not subgroup scope)"
            }
        )
    }
}

/// A device-local storage buffer.
pub struct Buffer {
    raw: vk::Buffer,
    alloc: Option<Allocation>,
    size: u64,
    /// Bytes reserved (a device-local storage buffer's size class), 0 if not cacheable.
    class: u64,
    /// A host-visible buffer that results are copied into (cached apart).
    readback: bool,
}

impl Buffer {
    /// Its size in bytes.
    pub fn size(&self) -> u64 {
        self.size
    }
}

/// Device-local storage buffers kept after use for the next request of the same size
/// class (like a caching allocator): fresh large allocations can be slower to reach
/// (seen on an H200: a reused 1 GiB buffer read at 4.3 TB/s, a fresh one at 1.7), and
/// allocating them costs milliseconds. At least this much is kept, and up to an
/// eighth of the device's memory (a program whose temporaries are larger allocated
/// them again on every run: three generations of Life on 8192² spent 19 ms there);
/// an allocation that fails for want of memory first empties the cache.
const BUFFER_CACHE_BYTES: u64 = 2 << 30;

/// How long one submission may run before arrc gives up on it, by default. The
/// largest workloads take about a second on the H200 and a few on lavapipe; a kernel
/// that does not terminate must not hang the caller.
pub const FENCE_TIMEOUT_S: u64 = 120;

/// The wait in seconds: `ARRC_DEVICE_TIMEOUT` (a whole number of seconds, at least 1)
/// where set, else [`FENCE_TIMEOUT_S`]. Read once per process.
pub fn fence_timeout_s() -> u64 {
    static S: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *S.get_or_init(|| {
        std::env::var("ARRC_DEVICE_TIMEOUT")
            .ok()
            .and_then(|v| v.trim().parse::<u64>().ok())
            .filter(|&s| s >= 1)
            .unwrap_or(FENCE_TIMEOUT_S)
    })
}

/// How long a wait polls the device's timeline before it blocks: a short
/// submission's result is then seen as soon as it is signalled, without a wake-up
/// from the driver. (Polling a timeline semaphore rather than a fence: on an H200
/// the end-to-end `+/` of 2^20 waited 30.4 µs rather than 31.7, in each of 24
/// processes a way.)
const FENCE_SPIN: std::time::Duration = std::time::Duration::from_micros(500);

/// Waits until `timeline` reaches `value`, polling for [`FENCE_SPIN`] first.
fn wait_timeline(
    device: &ash::Device,
    timeline: vk::Semaphore,
    value: u64,
    stalled: &std::cell::Cell<bool>,
    spin: (std::time::Duration, bool),
) -> Result<()> {
    let start = std::time::Instant::now();
    while start.elapsed() < spin.0 {
        // SAFETY: the semaphore belongs to this device.
        match unsafe { device.get_semaphore_counter_value(timeline) } {
            Ok(v) if v >= value => return Ok(()),
            Ok(_) if spin.1 => std::thread::yield_now(),
            Ok(_) => std::hint::spin_loop(),
            Err(e) => return Err(e).what("vkGetSemaphoreCounterValue"),
        }
    }
    let sems = [timeline];
    let values = [value];
    let info = vk::SemaphoreWaitInfo::default()
        .semaphores(&sems)
        .values(&values);
    // SAFETY: the semaphore belongs to this device and a submission signals `value`.
    match unsafe { device.wait_semaphores(&info, fence_timeout_s() * 1_000_000_000) } {
        Ok(()) => Ok(()),
        Err(vk::Result::TIMEOUT) => {
            stalled.set(true);
            Err(VkError::Timeout(fence_timeout_s()))
        }
        Err(e) => Err(e).what("vkWaitSemaphores"),
    }
}

/// The most bytes a recording writes into one buffer itself (`record`'s `fill`,
/// vkCmdUpdateBuffer's limit), a multiple of 4.
pub const MAX_FILL_BYTES: usize = 65536;

/// The size class of a storage buffer: 64 KiB granules.
fn size_class(size: u64) -> u64 {
    size.max(16).div_ceil(1 << 16) << 16
}

/// One dispatch of a sequence.
pub struct Dispatch<'a> {
    pub pipeline: PipelineId,
    /// One per descriptor binding, in binding order.
    pub buffers: Vec<View<'a>>,
    pub push: Vec<u32>,
    /// The workgroup count; with `indirect`, only an upper bound.
    pub groups: u32,
    /// vkCmdDispatchIndirect from this buffer's first three u32 (written by an earlier
    /// dispatch of the same recording).
    pub indirect: Option<&'a Buffer>,
}

/// The bytes of a buffer that one descriptor binding covers.
#[derive(Clone, Copy)]
pub struct View<'a> {
    pub buffer: &'a Buffer,
    pub offset: u64,
    pub range: u64,
}

/// A recorded command buffer with its descriptor sets, submitted as often as
/// needed (see [`Context::record`]).
pub struct Recording {
    cb: vk::CommandBuffer,
    dpool: DescriptorPool,
    /// The timeline value its last submission signals (`Context::timeline`).
    target: std::cell::Cell<u64>,
    /// Dispatches followed by a timestamp of their own (`Context::profile`).
    profiled: u32,
    /// The first of its queries in the timestamp pool: its own pair, so that
    /// recordings in flight together (`Context::launch`) time themselves; the
    /// shared start of the pool for profiled ones; none when the device has no
    /// timestamps or every pair is taken.
    query: Option<u32>,
}

/// Recordings in flight at once that each get timestamps of their own.
const QUERY_SLOTS: u32 = 64;
/// Queries of one recording: its start, the end of its last dispatch, and the end
/// of its readback copies; then its profiled dispatches' ends.
const RECORDING_QUERIES: u32 = 3;
/// Where the recordings' own query triples start: after the triple and the profiled
/// dispatches' queries that one-shot commands and profiled recordings share.
const SLOT_QUERIES: u32 = RECORDING_QUERIES + PROFILED_DISPATCHES;

/// Dispatches of one recording that `Context::profile` times at most.
const PROFILED_DISPATCHES: u32 = 4096;

/// A descriptor pool and what it holds at most (sets, storage-buffer descriptors).
#[derive(Clone, Copy)]
struct DescriptorPool {
    raw: vk::DescriptorPool,
    sets: u32,
    descriptors: u32,
}

/// Recordings' objects kept for the next ones at most: making them on every
/// statement cost tens of microseconds each on NVIDIA.
const SPARE_RECORDINGS: usize = 16;
/// Readback buffers kept for reuse at most, in bytes.
const READBACK_CACHE_BYTES: u64 = 64 << 20;

/// Measurements of one submission.
#[derive(Clone, Debug, Default)]
pub struct RunStats {
    /// Time between the first and last timestamp on the device, in nanoseconds.
    pub device_ns: Option<f64>,
    /// The first and last timestamps as the device counts (see
    /// [`Context::calibration`]: with it, a wait splits into the time before the
    /// device started, its own, and the time after it ended).
    pub device_ticks: Option<(u64, u64)>,
    /// The device's timestamp after the submission's readback copies (what follows
    /// it is the completion's signal and the host seeing it).
    pub copied_tick: Option<u64>,
    /// With `Context::profile` when the recording was made: each dispatch's time, from
    /// the end of the one before it (or the start) to its own end, in nanoseconds.
    pub dispatch_ns: Vec<f64>,
}

pub struct Context {
    device: ash::Device,
    queue: vk::Queue,
    /// A timeline semaphore every submission signals, each with the next value
    /// (the last in `timeline_value`): waits poll it.
    timeline: vk::Semaphore,
    timeline_value: std::cell::Cell<u64>,
    pool: vk::CommandPool,
    allocator: Option<Allocator>,
    /// A submission outlasted [`fence_timeout_s`]: the queue may still be busy, so
    /// nothing more is submitted.
    stalled: std::cell::Cell<bool>,
    cache: vk::PipelineCache,
    /// Where the pipeline cache is kept between processes (`disk_cache`).
    cache_file: Option<std::path::PathBuf>,
    /// Slots of pipelines; a destroyed one's slot is reused.
    pipelines: Vec<Option<Pipeline>>,
    free_slots: Vec<usize>,
    made: usize,
    epoch: u64,
    by_key: HashMap<PipelineKey, PipelineId>,
    query_pool: vk::QueryPool,
    /// The device writes timestamps on this queue.
    can_time: bool,
    buffer_cache: HashMap<u64, Vec<Buffer>>,
    cached_bytes: u64,
    /// The most bytes `buffer_cache` holds.
    buffer_cache_limit: u64,
    readback_cache: HashMap<u64, Vec<Buffer>>,
    readback_cached_bytes: u64,
    /// Command buffers and descriptor pools of released recordings.
    spare_commands: Vec<vk::CommandBuffer>,
    /// Query pairs of the timestamp pool no recording holds.
    free_queries: Vec<u32>,
    spare_pools: Vec<DescriptorPool>,
    /// Pipelines made from now on record the driver's statistics (a diagnostic for
    /// tuning: registers per invocation decide how many workgroups fit on a core).
    pub capture_statistics: bool,
    /// Recordings made from now on write a timestamp after each dispatch (up to
    /// [`PROFILED_DISPATCHES`]), so that `RunStats::dispatch_ns` times each kernel.
    pub profile: bool,
    /// Recordings made from now on are timed (`RunStats::device_ns`): a timestamp
    /// before and after their dispatches and after their readback. Off unless asked
    /// for: on NVIDIA the queries cost a submission about 6 µs of its wait.
    pub timing: bool,
    /// See [`Self::host_storage`].
    host_storage: bool,
    /// How long a wait polls before it blocks ([`FENCE_SPIN`]), and whether it
    /// yields between polls: on a CPU device (lavapipe) the kernels run on the
    /// cores a busy poll would take.
    spin: (std::time::Duration, bool),
    executables: Option<ash::khr::pipeline_executable_properties::Device>,
    /// Calibrated timestamps (device and CLOCK_MONOTONIC), where offered.
    calibrated: Option<ash::ext::calibrated_timestamps::Device>,
    pub info: DeviceInfo,
}

/// Refuses a transfer of `bytes` bytes that would pass the end of `b`.
fn fits(bytes: u64, b: &Buffer, what: &str) -> Result<()> {
    if bytes > b.size {
        return Err(VkError::Limit(format!(
            "a {what} of {bytes} bytes into a buffer of {} bytes",
            b.size
        )));
    }
    Ok(())
}

impl Context {
    /// Opens a device: `index` if given (also from `ARRC_DEVICE`), else the first
    /// discrete GPU, else the first device.
    pub fn new(index: Option<usize>) -> Result<Context> {
        Self::open(shared_instance()?, index)
    }

    fn open(instance: std::sync::Arc<Instance>, index: Option<usize>) -> Result<Context> {
        // SAFETY: valid instance.
        let pdevs =
            unsafe { instance.enumerate_physical_devices() }.what("vkEnumeratePhysicalDevices")?;
        if pdevs.is_empty() {
            return Err(VkError::NoDevice(
                "the Vulkan loader reports no physical device".into(),
            ));
        }
        let index = index.or_else(|| {
            std::env::var("ARRC_DEVICE")
                .ok()
                .and_then(|s| s.parse().ok())
        });
        let chosen = match index {
            Some(i) => i,
            None => pdevs
                .iter()
                .position(|d| {
                    // SAFETY: valid physical device.
                    let p = unsafe { instance.get_physical_device_properties(*d) };
                    p.device_type == vk::PhysicalDeviceType::DISCRETE_GPU
                })
                .unwrap_or(0),
        };
        let pdev = *pdevs.get(chosen).ok_or_else(|| {
            VkError::NoDevice(format!(
                "device {chosen} does not exist ({} found)",
                pdevs.len()
            ))
        })?;
        let info = query_info(&instance, pdev, chosen);
        if info.api < vk::API_VERSION_1_2 {
            return Err(VkError::Unsupported(format!(
                "Vulkan 1.2 or later (device has {})",
                info.api_version
            )));
        }
        if !info.subgroup_arithmetic {
            return Err(VkError::Unsupported(
                "subgroup arithmetic operations in compute shaders".into(),
            ));
        }
        // SAFETY: valid physical device.
        let qf = unsafe { instance.get_physical_device_queue_family_properties(pdev) };
        let compute =
            |q: &vk::QueueFamilyProperties| q.queue_flags.contains(vk::QueueFlags::COMPUTE);
        // `ARRC_QUEUE_FAMILY=k` (a measurement aid): family k where it computes.
        let asked = std::env::var("ARRC_QUEUE_FAMILY")
            .ok()
            .and_then(|v| v.parse::<usize>().ok())
            .filter(|&k| qf.get(k).is_some_and(compute));
        let qfi = asked
            .or_else(|| qf.iter().position(compute))
            .ok_or_else(|| VkError::Unsupported("a compute queue".into()))?
            as u32;
        let can_time = info.timestamp_period_ns > 0.0 && qf[qfi as usize].timestamp_valid_bits > 0;
        let prio = [1.0f32];
        let qci = [vk::DeviceQueueCreateInfo::default()
            .queue_family_index(qfi)
            .queue_priorities(&prio)];
        let mut f12 = vk::PhysicalDeviceVulkan12Features::default()
            .timeline_semaphore(true)
            .shader_subgroup_extended_types(info.subgroup_extended_types)
            .shader_buffer_int64_atomics(info.int64_atomics)
            .vulkan_memory_model(info.cooperative_matrix)
            .shader_int8(info.cooperative_matrix);
        let mut f13 = vk::PhysicalDeviceVulkan13Features::default()
            .subgroup_size_control(info.full_subgroups)
            .compute_full_subgroups(info.full_subgroups);
        let base = vk::PhysicalDeviceFeatures::default()
            .shader_int64(info.shader_int64)
            .shader_float64(info.shader_float64);
        let mut feats = vk::PhysicalDeviceFeatures2::default()
            .features(base)
            .push_next(&mut f12);
        if info.api >= vk::API_VERSION_1_3 {
            feats = feats.push_next(&mut f13);
        }
        let mut pe = vk::PhysicalDevicePipelineExecutablePropertiesFeaturesKHR::default()
            .pipeline_executable_info(true);
        let mut ext_names = vec![];
        let mut cm =
            vk::PhysicalDeviceCooperativeMatrixFeaturesKHR::default().cooperative_matrix(true);
        if info.cooperative_matrix {
            feats = feats.push_next(&mut cm);
            ext_names.push(ash::khr::cooperative_matrix::NAME.as_ptr());
        }
        let mut mr = vk::PhysicalDeviceShaderMaximalReconvergenceFeaturesKHR::default()
            .shader_maximal_reconvergence(true);
        let mut ucf = vk::PhysicalDeviceShaderSubgroupUniformControlFlowFeaturesKHR::default()
            .shader_subgroup_uniform_control_flow(true);
        if info.maximal_reconvergence {
            feats = feats.push_next(&mut mr).push_next(&mut ucf);
            ext_names.push(ash::khr::shader_maximal_reconvergence::NAME.as_ptr());
            ext_names.push(ash::khr::shader_subgroup_uniform_control_flow::NAME.as_ptr());
        }
        if info.pipeline_statistics {
            feats = feats.push_next(&mut pe);
            ext_names.push(ash::khr::pipeline_executable_properties::NAME.as_ptr());
        }
        // Calibrated timestamps where both the device's and CLOCK_MONOTONIC are.
        let calibrates = has_extension(&instance, pdev, ash::ext::calibrated_timestamps::NAME) && {
            let ci = ash::ext::calibrated_timestamps::Instance::new(&instance.entry, &instance);
            // SAFETY: valid physical device of this instance.
            unsafe { ci.get_physical_device_calibrateable_time_domains(pdev) }.is_ok_and(|d| {
                d.contains(&vk::TimeDomainEXT::DEVICE)
                    && d.contains(&vk::TimeDomainEXT::CLOCK_MONOTONIC)
            })
        };
        if calibrates {
            ext_names.push(ash::ext::calibrated_timestamps::NAME.as_ptr());
        }
        let dci = vk::DeviceCreateInfo::default()
            .queue_create_infos(&qci)
            .push_next(&mut feats)
            .enabled_extension_names(&ext_names);
        // SAFETY: create info points at live locals.
        let device = unsafe { instance.create_device(pdev, &dci, None) }.what("vkCreateDevice")?;
        let queue = unsafe { device.get_device_queue(qfi, 0) };
        let mut tci = vk::SemaphoreTypeCreateInfo::default()
            .semaphore_type(vk::SemaphoreType::TIMELINE)
            .initial_value(0);
        // SAFETY: a valid device; the create info points at a live local.
        let timeline = unsafe {
            device.create_semaphore(
                &vk::SemaphoreCreateInfo::default().push_next(&mut tci),
                None,
            )
        }
        .what("vkCreateSemaphore")?;
        let pool = unsafe {
            device.create_command_pool(
                &vk::CommandPoolCreateInfo::default()
                    .queue_family_index(qfi)
                    .flags(vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER),
                None,
            )
        }
        .what("vkCreateCommandPool")?;
        // The pipelines earlier processes compiled, when their file checks out.
        // SAFETY: valid physical device.
        let props = unsafe { instance.get_physical_device_properties(pdev) };
        let cache_file = crate::disk_cache::path_for(&props);
        let initial = cache_file
            .as_deref()
            .map(|p| crate::disk_cache::load(p, &props))
            .unwrap_or_default();
        let cache = unsafe {
            device.create_pipeline_cache(
                &vk::PipelineCacheCreateInfo::default().initial_data(&initial),
                None,
            )
        }
        .or_else(|_| unsafe {
            device.create_pipeline_cache(&vk::PipelineCacheCreateInfo::default(), None)
        })
        .what("vkCreatePipelineCache")?;
        let query_pool = unsafe {
            device.create_query_pool(
                &vk::QueryPoolCreateInfo::default()
                    .query_type(vk::QueryType::TIMESTAMP)
                    .query_count(SLOT_QUERIES + RECORDING_QUERIES * QUERY_SLOTS),
                None,
            )
        }
        .what("vkCreateQueryPool")?;
        let executables = info
            .pipeline_statistics
            .then(|| ash::khr::pipeline_executable_properties::Device::new(&instance, &device));
        let calibrated =
            calibrates.then(|| ash::ext::calibrated_timestamps::Device::new(&instance, &device));
        let allocator = Allocator::new(&AllocatorCreateDesc {
            instance: instance.raw.clone(),
            device: device.clone(),
            physical_device: pdev,
            debug_settings: Default::default(),
            buffer_device_address: false,
            // Blocks start small and double as the session needs more (a first
            // 256 MB block costs milliseconds on NVIDIA's driver, which a program of
            // small arrays would pay at every process start).
            allocation_sizes: gpu_allocator::AllocationSizes::new(4 << 20, 4 << 20)
                .with_max_device_memblock_size(256 << 20)
                .with_max_host_memblock_size(64 << 20),
        })
        .map_err(|e| VkError::Unsupported(format!("memory allocator: {e}")))?;
        let mut ctx = Context {
            device,
            queue,
            timeline,
            timeline_value: std::cell::Cell::new(0),
            pool,
            allocator: Some(allocator),
            cache,
            cache_file,
            pipelines: vec![],
            free_slots: vec![],
            made: 0,
            epoch: 0,
            by_key: HashMap::new(),
            query_pool,
            can_time,
            buffer_cache: HashMap::new(),
            cached_bytes: 0,
            // (On a CPU device, lavapipe's, its memory is the host's: the floor.)
            buffer_cache_limit: if info.device_type.contains("CPU") {
                BUFFER_CACHE_BYTES
            } else {
                BUFFER_CACHE_BYTES.max(info.device_local_bytes / 8)
            },
            readback_cache: HashMap::new(),
            readback_cached_bytes: 0,
            spare_commands: Vec::new(),
            free_queries: (0..QUERY_SLOTS)
                .rev()
                .map(|k| SLOT_QUERIES + RECORDING_QUERIES * k)
                .collect(),
            spare_pools: Vec::new(),
            stalled: std::cell::Cell::new(false),
            capture_statistics: false,
            profile: false,
            timing: false,
            host_storage: false,
            spin: (FENCE_SPIN, info.device_type.contains("CPU")),
            executables,
            calibrated,
            info,
        };
        // Whether readback buffers can also be bound as storage buffers (kernels
        // writing small results straight into host-visible memory).
        let probe = ctx.make_buffer(
            16,
            vk::BufferUsageFlags::TRANSFER_DST | vk::BufferUsageFlags::STORAGE_BUFFER,
            MemoryLocation::GpuToCpu,
        );
        if let Ok(b) = probe {
            ctx.destroy_buffer(b);
            ctx.host_storage = true;
        }
        Ok(ctx)
    }

    /// Readback buffers ([`Self::create_readback`]) can be bound to kernels as storage
    /// buffers: a kernel may write a small result where the host reads it, with no
    /// copy after it.
    pub fn host_storage(&self) -> bool {
        self.host_storage
    }

    fn allocator(&mut self) -> &mut Allocator {
        self.allocator.as_mut().expect("allocator lives until drop")
    }

    fn make_buffer(
        &mut self,
        size: u64,
        usage: vk::BufferUsageFlags,
        location: MemoryLocation,
    ) -> Result<Buffer> {
        // Vulkan forbids empty buffers: empty arrays get a small one.
        let alloc_size = size.max(16);
        let ci = vk::BufferCreateInfo::default()
            .size(alloc_size)
            .usage(usage)
            .sharing_mode(vk::SharingMode::EXCLUSIVE);
        // SAFETY: valid device and create info.
        let raw = unsafe { self.device.create_buffer(&ci, None) }
            .what("vkCreateBuffer")
            .map_err(|e| match e {
                VkError::OutOfMemory { detail, .. } => VkError::OutOfMemory {
                    bytes: alloc_size,
                    detail,
                },
                e => e,
            })?;
        let requirements = unsafe { self.device.get_buffer_memory_requirements(raw) };
        let alloc = self.allocator().allocate(&AllocationCreateDesc {
            name: "arrc",
            requirements,
            location,
            linear: true,
            allocation_scheme: AllocationScheme::GpuAllocatorManaged,
        });
        let alloc = match alloc {
            Ok(a) => a,
            Err(e) => {
                unsafe { self.device.destroy_buffer(raw, None) };
                return Err(VkError::OutOfMemory {
                    bytes: alloc_size,
                    detail: e.to_string(),
                });
            }
        };
        // SAFETY: memory comes from the allocator for this buffer's requirements.
        if let Err(e) = unsafe {
            self.device
                .bind_buffer_memory(raw, alloc.memory(), alloc.offset())
        } {
            let _ = self.allocator().free(alloc);
            unsafe { self.device.destroy_buffer(raw, None) };
            return Err(VkError::Vulkan {
                what: "vkBindBufferMemory",
                result: e,
            });
        }
        Ok(Buffer {
            raw,
            alloc: Some(alloc),
            size,
            class: 0,
            readback: false,
        })
    }

    /// A device-local storage buffer of `size` bytes.
    pub fn create_buffer(&mut self, size: u64) -> Result<Buffer> {
        // Kernels bind a large array as up to 64 windows of the device's largest
        // storage-buffer range.
        let range = self.info.max_storage_buffer_range.max(1 << 16);
        let window = 1u64 << (31 - range.leading_zeros());
        let limit = window.saturating_mul(64);
        if size > limit {
            return Err(VkError::Limit(format!(
                "an array of {size} bytes exceeds the {limit} bytes arrc can bind on this device (64 storage buffers of {window} bytes); split the data"
            )));
        }
        let class = size_class(size);
        if let Some(mut b) = self.buffer_cache.get_mut(&class).and_then(|v| v.pop()) {
            self.cached_bytes -= class;
            b.size = size;
            return Ok(b);
        }
        let usage = vk::BufferUsageFlags::STORAGE_BUFFER
            | vk::BufferUsageFlags::TRANSFER_SRC
            | vk::BufferUsageFlags::TRANSFER_DST
            | vk::BufferUsageFlags::INDIRECT_BUFFER;
        let mut b = match self.make_buffer(class, usage, MemoryLocation::GpuOnly) {
            Err(VkError::OutOfMemory { .. }) if self.cached_bytes > 0 => {
                // The cache gives its memory back, and the allocation is tried again.
                let cached: Vec<Buffer> = self.buffer_cache.drain().flat_map(|(_, v)| v).collect();
                self.cached_bytes = 0;
                for c in cached {
                    self.destroy_buffer(c);
                }
                self.make_buffer(class, usage, MemoryLocation::GpuOnly)?
            }
            r => r?,
        };
        b.size = size;
        b.class = class;
        Ok(b)
    }

    /// Returns a buffer: storage buffers go to the cache while it has room.
    pub fn free_buffer(&mut self, b: Buffer) {
        if b.readback {
            if self.readback_cached_bytes + b.class <= READBACK_CACHE_BYTES {
                self.readback_cached_bytes += b.class;
                self.readback_cache.entry(b.class).or_default().push(b);
                return;
            }
            return self.destroy_buffer(b);
        }
        if b.class > 0 && self.cached_bytes + b.class <= self.buffer_cache_limit {
            self.cached_bytes += b.class;
            self.buffer_cache.entry(b.class).or_default().push(b);
            return;
        }
        self.destroy_buffer(b);
    }

    fn destroy_buffer(&mut self, mut b: Buffer) {
        if self.stalled.get() {
            return;
        }
        if let Some(a) = b.alloc.take() {
            let _ = self.allocator().free(a);
        }
        // SAFETY: the device is idle for this buffer (every submission is waited on).
        unsafe { self.device.destroy_buffer(b.raw, None) };
    }

    fn one_shot(&self, record: impl FnOnce(&ash::Device, vk::CommandBuffer)) -> Result<()> {
        if self.stalled.get() {
            return Err(VkError::Timeout(fence_timeout_s()));
        }
        let cb = unsafe {
            self.device.allocate_command_buffers(
                &vk::CommandBufferAllocateInfo::default()
                    .command_pool(self.pool)
                    .level(vk::CommandBufferLevel::PRIMARY)
                    .command_buffer_count(1),
            )
        }
        .what("vkAllocateCommandBuffers")?[0];
        let r = (|| {
            unsafe {
                self.device
                    .begin_command_buffer(
                        cb,
                        &vk::CommandBufferBeginInfo::default()
                            .flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT),
                    )
                    .what("vkBeginCommandBuffer")?;
            }
            record(&self.device, cb);
            unsafe { self.device.end_command_buffer(cb) }.what("vkEndCommandBuffer")?;
            let value = self.submit_signalling(&[cb])?;
            // Work still in flight keeps its command buffer (leaked).
            wait_timeline(&self.device, self.timeline, value, &self.stalled, self.spin)
        })();
        if !self.stalled.get() {
            unsafe { self.device.free_command_buffers(self.pool, &[cb]) };
        }
        r
    }

    /// Copies `bytes` into the start of `dst` through a staging buffer.
    pub fn upload(&mut self, dst: &Buffer, bytes: &[u8]) -> Result<()> {
        if bytes.is_empty() {
            return Ok(());
        }
        fits(bytes.len() as u64, dst, "upload")?;
        let mut staging = self.make_buffer(
            bytes.len() as u64,
            vk::BufferUsageFlags::TRANSFER_SRC,
            MemoryLocation::CpuToGpu,
        )?;
        if let Some(m) = staging.alloc.as_mut().and_then(|a| a.mapped_slice_mut()) {
            m[..bytes.len()].copy_from_slice(bytes);
        }
        let (src, dstb, n) = (staging.raw, dst.raw, bytes.len() as u64);
        let r = self.one_shot(|d, cb| unsafe {
            d.cmd_copy_buffer(cb, src, dstb, &[vk::BufferCopy::default().size(n)]);
        });
        self.free_buffer(staging);
        r
    }

    /// Copies the first `bytes` bytes of `src` into `dst`, on the device, and waits.
    pub fn copy(&mut self, src: &Buffer, dst: &Buffer, bytes: u64) -> Result<()> {
        if bytes == 0 {
            return Ok(());
        }
        fits(bytes, src, "copy")?;
        fits(bytes, dst, "copy")?;
        let (s, d) = (src.raw, dst.raw);
        self.one_shot(|dev, cb| unsafe {
            dev.cmd_copy_buffer(cb, s, d, &[vk::BufferCopy::default().size(bytes)]);
        })
    }

    /// Reads the first `len` bytes of `src` back to the host.
    pub fn download(&mut self, src: &Buffer, len: u64) -> Result<Vec<u8>> {
        self.download_range(src, 0, len)
    }

    /// Reads `len` bytes of `src` from byte `offset` back to the host.
    pub fn download_range(&mut self, src: &Buffer, offset: u64, len: u64) -> Result<Vec<u8>> {
        if len == 0 {
            return Ok(vec![]);
        }
        fits(offset.saturating_add(len), src, "download")?;
        let staging = self.make_buffer(
            len,
            vk::BufferUsageFlags::TRANSFER_DST,
            MemoryLocation::GpuToCpu,
        )?;
        let (s, d, n) = (src.raw, staging.raw, len);
        let r = self.one_shot(|dev, cb| unsafe {
            dev.cmd_copy_buffer(
                cb,
                s,
                d,
                &[vk::BufferCopy::default().src_offset(offset).size(n)],
            );
        });
        let out = staging
            .alloc
            .as_ref()
            .and_then(|a| a.mapped_slice())
            .map(|m| m[..len as usize].to_vec())
            .unwrap_or_default();
        self.free_buffer(staging);
        r.map(|_| out)
    }

    /// Records a dispatch sequence once, to submit as often as needed: zero `zero`,
    /// a timestamp, the dispatches with barriers, a timestamp, then the copies
    /// `readback` (source, destination, bytes, offset in the destination) for the host.
    pub fn record(
        &mut self,
        zero: &[&Buffer],
        fill: &[(&Buffer, &[u8])],
        dispatches: &[Dispatch<'_>],
        readback: &[(&Buffer, &Buffer, u64, u64)],
    ) -> Result<Recording> {
        let max_groups = self.info.max_workgroup_count[0];
        for disp in dispatches {
            if disp.groups > max_groups {
                return Err(VkError::Limit(format!(
                    "{} workgroups exceed the device's maximum of {max_groups}",
                    disp.groups
                )));
            }
            let p = self.pipeline_at(disp.pipeline);
            if disp.buffers.len() as u32 != p.bindings || disp.push.len() as u32 != p.push_words {
                return Err(VkError::Limit(
                    "dispatch does not match its pipeline's bindings".into(),
                ));
            }
        }
        let total: u32 = dispatches.iter().map(|d| d.buffers.len() as u32).sum();
        let sets = dispatches.len().max(1) as u32;
        let dpool = self.descriptor_pool(sets, total.max(1))?;
        let cb = self.spare_commands.pop().unwrap_or_default();
        let profiled = if self.profile && self.can_time {
            (dispatches.len() as u32).min(PROFILED_DISPATCHES)
        } else {
            0
        };
        let timed = self.can_time && (self.timing || self.profile);
        let query = match (timed, profiled) {
            (false, _) => None,
            // Profiled recordings are waited for one by one (`Gpu::launch_val`
            // does not launch while profiling).
            (true, 1..) => Some(0),
            (true, 0) => self.free_queries.pop(),
        };
        let mut rec = Recording {
            cb,
            dpool,
            target: std::cell::Cell::new(0),
            profiled,
            query,
        };
        for (b, bytes) in fill {
            if bytes.len() > MAX_FILL_BYTES || !bytes.len().is_multiple_of(4) {
                return Err(VkError::Limit(format!(
                    "{} bytes cannot be written by the recording",
                    bytes.len()
                )));
            }
            fits(bytes.len() as u64, b, "fill")?;
        }
        match self.record_into(&mut rec, zero, fill, dispatches, readback) {
            Ok(()) => Ok(rec),
            Err(e) => {
                self.free_recording(rec);
                Err(e)
            }
        }
    }

    fn record_into(
        &mut self,
        rec: &mut Recording,
        zero: &[&Buffer],
        fill: &[(&Buffer, &[u8])],
        dispatches: &[Dispatch<'_>],
        readback: &[(&Buffer, &Buffer, u64, u64)],
    ) -> Result<()> {
        let d = &self.device;
        let layouts: Vec<_> = dispatches
            .iter()
            .map(|x| self.pipeline_at(x.pipeline).set_layout)
            .collect();
        let sets = if layouts.is_empty() {
            vec![]
        } else {
            unsafe {
                d.allocate_descriptor_sets(
                    &vk::DescriptorSetAllocateInfo::default()
                        .descriptor_pool(rec.dpool.raw)
                        .set_layouts(&layouts),
                )
            }
            .what("vkAllocateDescriptorSets")?
        };
        for (disp, set) in dispatches.iter().zip(&sets) {
            let infos: Vec<[vk::DescriptorBufferInfo; 1]> = disp
                .buffers
                .iter()
                .map(|v| {
                    // The array's bytes, not the (larger) size class behind it.
                    [vk::DescriptorBufferInfo::default()
                        .buffer(v.buffer.raw)
                        .offset(v.offset)
                        .range(v.range)]
                })
                .collect();
            let writes: Vec<_> = infos
                .iter()
                .enumerate()
                .map(|(i, info)| {
                    vk::WriteDescriptorSet::default()
                        .dst_set(*set)
                        .dst_binding(i as u32)
                        .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                        .buffer_info(info)
                })
                .collect();
            unsafe { d.update_descriptor_sets(&writes, &[]) };
        }
        if rec.cb == vk::CommandBuffer::null() {
            rec.cb = unsafe {
                d.allocate_command_buffers(
                    &vk::CommandBufferAllocateInfo::default()
                        .command_pool(self.pool)
                        .level(vk::CommandBufferLevel::PRIMARY)
                        .command_buffer_count(1),
                )
            }
            .what("vkAllocateCommandBuffers")?[0];
        }
        let cb = rec.cb;
        let (ts, qp, q0) = (rec.query.is_some(), self.query_pool, rec.query.unwrap_or(0));
        // Each barrier's access masks name only accesses its stages perform (the
        // validation layer's VUID-vkCmdPipelineBarrier-srcAccessMask-02815).
        // Whatever a later command does with what was written: a kernel reads or
        // writes it, a copy reads it back, an indirect dispatch takes its arguments.
        let later_stages = vk::PipelineStageFlags::COMPUTE_SHADER
            | vk::PipelineStageFlags::TRANSFER
            | vk::PipelineStageFlags::DRAW_INDIRECT;
        let later_access = vk::AccessFlags::SHADER_READ
            | vk::AccessFlags::SHADER_WRITE
            | vk::AccessFlags::TRANSFER_READ
            | vk::AccessFlags::INDIRECT_COMMAND_READ;
        let zeroed_barrier = vk::MemoryBarrier::default()
            .src_access_mask(vk::AccessFlags::TRANSFER_WRITE)
            .dst_access_mask(later_access);
        let write_barrier = vk::MemoryBarrier::default()
            .src_access_mask(vk::AccessFlags::SHADER_WRITE)
            .dst_access_mask(later_access);
        let host_barrier = vk::MemoryBarrier::default()
            .src_access_mask(vk::AccessFlags::SHADER_WRITE)
            .dst_access_mask(later_access | vk::AccessFlags::HOST_READ);
        // SAFETY: every handle below belongs to this device and outlives the recording.
        unsafe {
            // Simultaneous use: `submit_repeated` lists the buffer several times.
            let begin = vk::CommandBufferBeginInfo::default()
                .flags(vk::CommandBufferUsageFlags::SIMULTANEOUS_USE);
            d.begin_command_buffer(cb, &begin)
                .what("vkBeginCommandBuffer")?;
            if ts {
                d.cmd_reset_query_pool(cb, qp, q0, RECORDING_QUERIES + rec.profiled);
                d.cmd_write_timestamp(cb, vk::PipelineStageFlags::TOP_OF_PIPE, qp, q0);
            }
            for z in zero {
                d.cmd_fill_buffer(cb, z.raw, 0, vk::WHOLE_SIZE, 0);
            }
            for (b, bytes) in fill {
                d.cmd_update_buffer(cb, b.raw, 0, bytes);
            }
            if !zero.is_empty() || !fill.is_empty() {
                d.cmd_pipeline_barrier(
                    cb,
                    vk::PipelineStageFlags::TRANSFER,
                    later_stages,
                    vk::DependencyFlags::empty(),
                    &[zeroed_barrier],
                    &[],
                    &[],
                );
            }
            for (i, (disp, set)) in dispatches.iter().zip(&sets).enumerate() {
                let p = self.pipeline_at(disp.pipeline);
                d.cmd_bind_pipeline(cb, vk::PipelineBindPoint::COMPUTE, p.pipeline);
                d.cmd_bind_descriptor_sets(
                    cb,
                    vk::PipelineBindPoint::COMPUTE,
                    p.layout,
                    0,
                    &[*set],
                    &[],
                );
                if !disp.push.is_empty() {
                    let bytes: Vec<u8> = disp.push.iter().flat_map(|w| w.to_le_bytes()).collect();
                    d.cmd_push_constants(cb, p.layout, vk::ShaderStageFlags::COMPUTE, 0, &bytes);
                }
                match disp.indirect {
                    Some(args) => d.cmd_dispatch_indirect(cb, args.raw, 0),
                    None => d.cmd_dispatch(cb, disp.groups, 1, 1),
                }
                // Later dispatches may read what this one wrote, as data or as the
                // arguments of an indirect dispatch; after the last, the host too
                // (a kernel may write a readback buffer itself).
                let (stages, barrier) = match i + 1 == dispatches.len() {
                    true => (later_stages | vk::PipelineStageFlags::HOST, host_barrier),
                    false => (later_stages, write_barrier),
                };
                d.cmd_pipeline_barrier(
                    cb,
                    vk::PipelineStageFlags::COMPUTE_SHADER,
                    stages,
                    vk::DependencyFlags::empty(),
                    &[barrier],
                    &[],
                    &[],
                );
                if (i as u32) < rec.profiled {
                    let at = q0 + RECORDING_QUERIES + i as u32;
                    d.cmd_write_timestamp(cb, vk::PipelineStageFlags::BOTTOM_OF_PIPE, qp, at);
                }
            }
            if ts {
                d.cmd_write_timestamp(cb, vk::PipelineStageFlags::BOTTOM_OF_PIPE, qp, q0 + 1);
            }
            for (src, dst, bytes, offset) in readback {
                if *bytes > 0 {
                    d.cmd_copy_buffer(
                        cb,
                        src.raw,
                        dst.raw,
                        &[vk::BufferCopy::default().size(*bytes).dst_offset(*offset)],
                    );
                }
            }
            if !readback.is_empty() {
                let host = vk::MemoryBarrier::default()
                    .src_access_mask(vk::AccessFlags::TRANSFER_WRITE)
                    .dst_access_mask(vk::AccessFlags::HOST_READ);
                d.cmd_pipeline_barrier(
                    cb,
                    vk::PipelineStageFlags::TRANSFER,
                    vk::PipelineStageFlags::HOST,
                    vk::DependencyFlags::empty(),
                    &[host],
                    &[],
                    &[],
                );
            }
            if ts {
                d.cmd_write_timestamp(cb, vk::PipelineStageFlags::BOTTOM_OF_PIPE, qp, q0 + 2);
            }
            d.end_command_buffer(cb).what("vkEndCommandBuffer")?;
        }
        Ok(())
    }

    /// Submits a recording and waits for it; the device time between its timestamps.
    pub fn submit(&mut self, rec: &Recording) -> Result<RunStats> {
        self.submit_repeated(rec, 1)
    }

    /// Submits a recording `times` times back to back in one submission (the device
    /// never idles between them) and waits; the timestamps are the last run's.
    pub fn submit_repeated(&mut self, rec: &Recording, times: usize) -> Result<RunStats> {
        self.start(rec, times)?;
        self.wait(rec)
    }

    /// Submits a recording without waiting for it (several devices run at once);
    /// [`Context::wait`] must follow before the recording is submitted again or freed.
    pub fn launch(&mut self, rec: &Recording) -> Result<()> {
        self.start(rec, 1)
    }

    /// Submits a recording `times` times in one submission, signalling the next
    /// timeline value.
    fn start(&mut self, rec: &Recording, times: usize) -> Result<()> {
        if self.stalled.get() {
            return Err(VkError::Timeout(fence_timeout_s()));
        }
        let cbs = vec![rec.cb; times.max(1)];
        // The recording is complete and not in flight (every submission is waited
        // on).
        let value = self.submit_signalling(&cbs)?;
        rec.target.set(value);
        Ok(())
    }

    /// Submits these command buffers in one batch that signals the next timeline
    /// value, which it returns.
    fn submit_signalling(&self, cbs: &[vk::CommandBuffer]) -> Result<u64> {
        let value = self.timeline_value.get() + 1;
        self.timeline_value.set(value);
        let values = [value];
        let sems = [self.timeline];
        let mut tsi = vk::TimelineSemaphoreSubmitInfo::default().signal_semaphore_values(&values);
        let submit = [vk::SubmitInfo::default()
            .command_buffers(cbs)
            .signal_semaphores(&sems)
            .push_next(&mut tsi)];
        // SAFETY: the command buffers are complete and not in flight.
        unsafe {
            self.device
                .queue_submit(self.queue, &submit, vk::Fence::null())
                .what("vkQueueSubmit")?;
        }
        Ok(value)
    }

    /// Waits for a launched recording; the device time between its timestamps.
    pub fn wait(&mut self, rec: &Recording) -> Result<RunStats> {
        wait_timeline(
            &self.device,
            self.timeline,
            rec.target.get(),
            &self.stalled,
            self.spin,
        )?;
        self.read_timestamps(rec.query, rec.profiled)
    }

    pub fn free_recording(&mut self, rec: Recording) {
        if self.stalled.get() {
            return;
        }
        if let Some(q) = rec.query.filter(|&q| q >= SLOT_QUERIES) {
            self.free_queries.push(q);
        }
        // Kept for the next recordings (a command buffer is reset when it is begun
        // again, its pool allowing it).
        if rec.cb != vk::CommandBuffer::null() && self.spare_commands.len() < SPARE_RECORDINGS {
            self.spare_commands.push(rec.cb);
        } else {
            self.destroy_commands(rec.cb);
        }
        if self.spare_pools.len() < SPARE_RECORDINGS {
            self.spare_pools.push(rec.dpool);
        } else {
            // SAFETY: the recording is not in flight.
            unsafe { self.device.destroy_descriptor_pool(rec.dpool.raw, None) };
        }
    }

    fn destroy_commands(&mut self, cb: vk::CommandBuffer) {
        // SAFETY: not in flight (every submission is waited on).
        if cb != vk::CommandBuffer::null() {
            unsafe { self.device.free_command_buffers(self.pool, &[cb]) };
        }
    }

    /// A descriptor pool for at least `sets` sets of `descriptors` storage buffers in
    /// all: a released one, reset, when one is large enough.
    fn descriptor_pool(&mut self, sets: u32, descriptors: u32) -> Result<DescriptorPool> {
        if let Some(i) = self
            .spare_pools
            .iter()
            .position(|p| p.sets >= sets && p.descriptors >= descriptors)
        {
            let p = self.spare_pools.swap_remove(i);
            // SAFETY: no set of the pool is in use (its recording was released).
            unsafe {
                self.device
                    .reset_descriptor_pool(p.raw, vk::DescriptorPoolResetFlags::empty())
            }
            .what("vkResetDescriptorPool")?;
            return Ok(p);
        }
        // Room for larger recordings than this one, so that pools are reused.
        let (sets, descriptors) = (sets.max(64), descriptors.max(512));
        let sizes = [vk::DescriptorPoolSize::default()
            .ty(vk::DescriptorType::STORAGE_BUFFER)
            .descriptor_count(descriptors)];
        let raw = unsafe {
            self.device.create_descriptor_pool(
                &vk::DescriptorPoolCreateInfo::default()
                    .max_sets(sets)
                    .pool_sizes(&sizes),
                None,
            )
        }
        .what("vkCreateDescriptorPool")?;
        Ok(DescriptorPool {
            raw,
            sets,
            descriptors,
        })
    }

    /// A host-visible buffer that recordings copy results into (a released one of its
    /// size class when there is one); where [`Self::host_storage`], kernels may
    /// also write it.
    pub fn create_readback(&mut self, size: u64) -> Result<Buffer> {
        let class = size_class(size);
        if let Some(mut b) = self.readback_cache.get_mut(&class).and_then(|v| v.pop()) {
            self.readback_cached_bytes -= class;
            b.size = size;
            return Ok(b);
        }
        let usage = match self.host_storage {
            true => vk::BufferUsageFlags::TRANSFER_DST | vk::BufferUsageFlags::STORAGE_BUFFER,
            false => vk::BufferUsageFlags::TRANSFER_DST,
        };
        let mut b = self.make_buffer(class, usage, MemoryLocation::GpuToCpu)?;
        b.size = size;
        b.class = class;
        b.readback = true;
        Ok(b)
    }

    /// Zeroes `len` bytes from `offset` of a readback buffer from the host (before a
    /// submission that kernels write it in: host-coherent memory, so the write is
    /// visible to the device at submission).
    pub fn zero_mapped(&self, b: &Buffer, offset: u64, len: u64) {
        if let Some(m) = b.alloc.as_ref().and_then(|a| a.mapped_ptr()) {
            let end = (offset + len).min(b.size.max(16));
            if offset < end {
                // SAFETY: the mapping covers the buffer's bytes; no submission is in
                // flight for this buffer (its statement's last one was waited on).
                unsafe {
                    std::ptr::write_bytes(
                        (m.as_ptr() as *mut u8).add(offset as usize),
                        0,
                        (end - offset) as usize,
                    )
                };
            }
        }
    }

    /// `len` bytes from `offset` of a readback buffer, after the submission that
    /// filled it.
    pub fn read_mapped(&self, b: &Buffer, offset: u64, len: u64) -> Vec<u8> {
        b.alloc
            .as_ref()
            .and_then(|a| a.mapped_slice())
            .map(|m| {
                let start = (offset as usize).min(m.len());
                m[start..(start + len as usize).min(m.len())].to_vec()
            })
            .unwrap_or_default()
    }

    /// Times a device-to-device copy of `bytes` bytes (the bandwidth baseline).
    pub fn time_copy(&mut self, src: &Buffer, dst: &Buffer, bytes: u64) -> Result<RunStats> {
        fits(bytes, src, "copy")?;
        fits(bytes, dst, "copy")?;
        let (s, d, ts, qp) = (src.raw, dst.raw, self.can_time, self.query_pool);
        self.one_shot(|dev, cb| unsafe {
            if ts {
                dev.cmd_reset_query_pool(cb, qp, 0, RECORDING_QUERIES);
                dev.cmd_write_timestamp(cb, vk::PipelineStageFlags::TOP_OF_PIPE, qp, 0);
            }
            dev.cmd_copy_buffer(cb, s, d, &[vk::BufferCopy::default().size(bytes)]);
            if ts {
                dev.cmd_write_timestamp(cb, vk::PipelineStageFlags::BOTTOM_OF_PIPE, qp, 1);
                dev.cmd_write_timestamp(cb, vk::PipelineStageFlags::BOTTOM_OF_PIPE, qp, 2);
            }
        })?;
        self.read_timestamps(self.can_time.then_some(0), 0)
    }

    /// The submission's two timestamps and the `profiled` dispatches' own, from
    /// query `query` on.
    /// Where the device calibrates its timestamps (VK_EXT_calibrated_timestamps):
    /// a function from a device timestamp taken before now to the host's
    /// CLOCK_MONOTONIC nanoseconds. (Calibrating costs microseconds: take it once,
    /// after what is timed.)
    pub fn calibration(&self) -> Option<impl Fn(u64) -> f64> {
        let cal = self.calibrated.as_ref()?;
        let domains = [
            vk::CalibratedTimestampInfoEXT::default().time_domain(vk::TimeDomainEXT::DEVICE),
            vk::CalibratedTimestampInfoEXT::default()
                .time_domain(vk::TimeDomainEXT::CLOCK_MONOTONIC),
        ];
        // SAFETY: the extension is enabled on this device.
        let (now, _) = unsafe { cal.get_calibrated_timestamps(&domains) }.ok()?;
        let period = self.info.timestamp_period_ns as f64;
        Some(move |t: u64| now[1] as f64 - now[0].wrapping_sub(t) as f64 * period)
    }

    fn read_timestamps(&self, query: Option<u32>, profiled: u32) -> Result<RunStats> {
        let mut stats = RunStats::default();
        if let Some(first) = query {
            // (On the stack unless dispatches are profiled: this runs after every
            // submission.)
            let mut three = [0u64; RECORDING_QUERIES as usize];
            let mut many = vec![];
            let out: &mut [u64] = if profiled == 0 {
                &mut three
            } else {
                many.resize((RECORDING_QUERIES + profiled) as usize, 0);
                &mut many
            };
            // SAFETY: the queries were written by the submission just waited on.
            let r = unsafe {
                self.device.get_query_pool_results(
                    self.query_pool,
                    first,
                    out,
                    vk::QueryResultFlags::TYPE_64 | vk::QueryResultFlags::WAIT,
                )
            };
            if r.is_ok() {
                let ns = |a: u64, b: u64| {
                    b.wrapping_sub(a) as f64 * self.info.timestamp_period_ns as f64
                };
                stats.device_ns = Some(ns(out[0], out[1]));
                stats.device_ticks = Some((out[0], out[1]));
                stats.copied_tick = Some(out[2]);
                let mut prev = out[0];
                for &t in &out[RECORDING_QUERIES as usize..] {
                    stats.dispatch_ns.push(ns(prev, t));
                    prev = t;
                }
            }
        }
        Ok(stats)
    }
}

impl Drop for Context {
    fn drop(&mut self) {
        // After a stall the device may still run that work: everything is left to the
        // process's exit rather than destroyed under it. That includes the allocator,
        // whose own Drop frees every memory block (on lavapipe, memory the kernel
        // still running reads: the process crashed as it ended).
        if self.stalled.get() {
            std::mem::forget(self.allocator.take());
            return;
        }
        // SAFETY: all submissions were waited on; objects are destroyed child-first.
        unsafe {
            let _ = self.device.device_wait_idle();
            let cached: Vec<Buffer> = self
                .buffer_cache
                .drain()
                .chain(self.readback_cache.drain())
                .flat_map(|(_, v)| v)
                .collect();
            for cb in std::mem::take(&mut self.spare_commands) {
                self.destroy_commands(cb);
            }
            for p in std::mem::take(&mut self.spare_pools) {
                self.device.destroy_descriptor_pool(p.raw, None);
            }
            for b in cached {
                self.destroy_buffer(b);
            }
            for p in self.pipelines.drain(..).flatten() {
                self.device.destroy_pipeline(p.pipeline, None);
                self.device.destroy_pipeline_layout(p.layout, None);
                self.device
                    .destroy_descriptor_set_layout(p.set_layout, None);
            }
            self.allocator = None;
            self.device.destroy_query_pool(self.query_pool, None);
            self.device.destroy_semaphore(self.timeline, None);
            if let Some(path) = &self.cache_file {
                if let Ok(data) = self.device.get_pipeline_cache_data(self.cache) {
                    crate::disk_cache::save(path, &data);
                }
            }
            self.device.destroy_pipeline_cache(self.cache, None);
            self.device.destroy_command_pool(self.pool, None);
            self.device.destroy_device(None);
            // The instance is destroyed by its own Drop, after this.
        }
    }
}
