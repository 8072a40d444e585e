//! The arrc Vulkan runtime, on ash: instance and device selection, memory through
//! gpu-allocator, storage buffers with staging uploads and readbacks, compute pipelines
//! with a pipeline cache, command recording and submission, timestamp queries.
//!
//! Invariants:
//! - This is the only crate that depends on ash. It knows nothing of arrc's IR: it runs
//!   SPIR-V words with bindings, push constants and specialization constants.
//! - Every Vulkan failure becomes a [`VkError`] that says what to do; nothing panics.
//! - A dispatch sequence is recorded into one command buffer with a compute→compute
//!   barrier between dispatches, and submitted once.

mod context;
pub mod disk_cache;

pub use context::{
    enumerate, module_key, validation_messages, Buffer, Context, CooperativeMatrix, DeviceInfo,
    Dispatch, PipelineId, PipelineReport, Recording, RunStats, View, MAX_FILL_BYTES, MAX_PIPELINES,
};

#[derive(Debug, thiserror::Error)]
pub enum VkError {
    #[error("no Vulkan device found: {0}. Install a Vulkan driver (on Debian/Ubuntu: apt-get install mesa-vulkan-drivers libvulkan1 for the lavapipe CPU device)")]
    NoDevice(String),
    #[error("Vulkan error in {what}: {result}")]
    Vulkan {
        what: &'static str,
        result: ash::vk::Result,
    },
    #[error("device memory exhausted allocating {bytes} bytes: use smaller arrays or a device with more memory ({detail})")]
    OutOfMemory { bytes: u64, detail: String },
    #[error("device limit exceeded: {0}")]
    Limit(String),
    #[error("the device lacks a feature arrc needs: {0}")]
    Unsupported(String),
    /// The driver's compiler rejected a kernel arrc made (a valid SPIR-V module:
    /// spirv-val passes it); nothing ran.
    #[error("the device's shader compiler rejected a kernel ({0}); the statement can run on the CPU reference (--backend auto or cpu); please report it")]
    Compiler(String),
    #[error("the device did not finish a submission within {0} s: the statement asks for more work than that (a dfn scan of a large matrix, say), or a kernel does not terminate (please report the statement); this session's device is unusable now, start a new one (ARRC_DEVICE_TIMEOUT=seconds sets the wait)")]
    Timeout(u64),
}

pub(crate) trait VkContext<T> {
    fn what(self, what: &'static str) -> Result<T, VkError>;
}

impl<T> VkContext<T> for Result<T, ash::vk::Result> {
    fn what(self, what: &'static str) -> Result<T, VkError> {
        self.map_err(|result| match result {
            ash::vk::Result::ERROR_OUT_OF_DEVICE_MEMORY
            | ash::vk::Result::ERROR_OUT_OF_HOST_MEMORY => VkError::OutOfMemory {
                bytes: 0,
                detail: format!("{what}: {result}"),
            },
            _ => VkError::Vulkan { what, result },
        })
    }
}
