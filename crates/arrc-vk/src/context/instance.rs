//! The Vulkan instance (created once per process, with the validation layers when
//! asked), and what each physical device offers (`DeviceInfo`, `enumerate`).

use super::{CooperativeMatrix, DeviceInfo, Result};
use crate::{VkContext, VkError};
use ash::vk;
use std::ffi::CString;
use std::sync::atomic::{AtomicU64, Ordering};

/// The Vulkan loader, loaded once per process and never unloaded: NVIDIA's driver
/// (580) could not be loaded again after about 28 load-and-unload cycles in one
/// process ("Unable to find a Vulkan driver" from the 29th `Session::new`).
pub(super) fn load_entry() -> Result<ash::Entry> {
    static ENTRY: std::sync::OnceLock<std::result::Result<ash::Entry, String>> =
        std::sync::OnceLock::new();
    ENTRY
        // SAFETY: loading the system Vulkan loader library; failure is reported.
        .get_or_init(|| unsafe { ash::Entry::load() }.map_err(|e| e.to_string()))
        .clone()
        .map_err(|e| VkError::NoDevice(format!("the Vulkan loader could not be loaded ({e})")))
}

/// A Vulkan instance, with the loader that made it and, under validation, the
/// messenger that sends the layer's messages to stderr. Dropping it destroys the
/// messenger, then the instance, in that order (the loader stays loaded: `load_entry`).
pub(super) struct Instance {
    pub(super) raw: ash::Instance,
    debug: Option<(ash::ext::debug_utils::Instance, vk::DebugUtilsMessengerEXT)>,
    pub(super) entry: ash::Entry,
}

impl std::ops::Deref for Instance {
    type Target = ash::Instance;
    fn deref(&self) -> &ash::Instance {
        &self.raw
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        // SAFETY: every child object was destroyed by its owner before this.
        unsafe {
            if let Some((loader, m)) = self.debug.take() {
                loader.destroy_debug_utils_messenger(m, None);
            }
            self.raw.destroy_instance(None);
        }
    }
}

/// Validation messages the layer sent.
static VALIDATION_MESSAGES: AtomicU64 = AtomicU64::new(0);

/// How many validation messages the Khronos layer has reported in this process.
pub fn validation_messages() -> u64 {
    VALIDATION_MESSAGES.load(Ordering::Relaxed)
}

/// `ARRC_VALIDATION`: unset or `0`, no validation; `1`, the Khronos validation layer
/// with synchronization validation, its messages on stderr; `fatal`, the same, and the
/// process aborts at the first message (CI runs the tests so).
pub(super) fn validation_mode() -> Option<bool> {
    match std::env::var("ARRC_VALIDATION").ok()?.as_str() {
        "" | "0" => None,
        "fatal" => Some(true),
        _ => Some(false),
    }
}

unsafe extern "system" fn on_validation_message(
    severity: vk::DebugUtilsMessageSeverityFlagsEXT,
    kind: vk::DebugUtilsMessageTypeFlagsEXT,
    data: *const vk::DebugUtilsMessengerCallbackDataEXT<'_>,
    _user: *mut std::ffi::c_void,
) -> vk::Bool32 {
    // SAFETY: the layer passes a valid callback data struct with a C string.
    let msg = unsafe {
        data.as_ref()
            .filter(|d| !d.p_message.is_null())
            .map(|d| std::ffi::CStr::from_ptr(d.p_message).to_string_lossy())
            .unwrap_or_default()
    };
    // stderr, never stdout: `--format json` output stays parseable. Written to the
    // stream itself, not through `eprintln!`, which a test harness captures (and loses
    // when the process aborts).
    use std::io::Write;
    let mut err = std::io::stderr();
    let _ = writeln!(err, "arrc: Vulkan validation ({severity:?}): {msg}");
    if kind.contains(vk::DebugUtilsMessageTypeFlagsEXT::VALIDATION) {
        VALIDATION_MESSAGES.fetch_add(1, Ordering::Relaxed);
        if validation_mode() == Some(true) {
            // The call that drew the message, and the thread (a test's name under
            // the test harness): the abort leaves nothing else to go on.
            let thread = std::thread::current();
            let _ = writeln!(
                err,
                "arrc: ARRC_VALIDATION=fatal: aborting at the first validation message, on thread {:?}, at\n{}",
                thread.name().unwrap_or("?"),
                std::backtrace::Backtrace::force_capture()
            );
            std::process::abort();
        }
    }
    vk::FALSE
}

pub(super) fn create_instance(entry: ash::Entry) -> Result<Instance> {
    let name = CString::new("arrc").unwrap_or_default();
    let app = vk::ApplicationInfo::default()
        .application_name(&name)
        .engine_name(&name)
        .api_version(vk::API_VERSION_1_3);
    let validation = validation_mode().is_some();
    // The layer may also come from VK_INSTANCE_LAYERS: its messages go to stderr too.
    let layer_from_env = std::env::var("VK_INSTANCE_LAYERS")
        .is_ok_and(|l| l.contains("VK_LAYER_KHRONOS_validation"));
    let layer = c"VK_LAYER_KHRONOS_validation";
    let mut layers = vec![];
    let mut exts = vec![];
    if validation {
        // SAFETY: a plain query of the loader.
        let have = unsafe { entry.enumerate_instance_layer_properties() }
            .unwrap_or_default()
            .iter()
            .any(|l| l.layer_name_as_c_str() == Ok(layer));
        if !have {
            return Err(VkError::Unsupported(
                "ARRC_VALIDATION is set but the Khronos validation layer is not installed (on Debian/Ubuntu: apt-get install vulkan-validationlayers)".into(),
            ));
        }
        layers.push(layer.as_ptr());
        exts.push(ash::ext::validation_features::NAME.as_ptr());
    }
    // SAFETY: a plain query of the loader.
    let debug_utils = (validation || layer_from_env)
        && unsafe { entry.enumerate_instance_extension_properties(None) }
            .unwrap_or_default()
            .iter()
            .any(|e| e.extension_name_as_c_str() == Ok(ash::ext::debug_utils::NAME));
    if debug_utils {
        exts.push(ash::ext::debug_utils::NAME.as_ptr());
    }
    let enables = [vk::ValidationFeatureEnableEXT::SYNCHRONIZATION_VALIDATION];
    let mut features = vk::ValidationFeaturesEXT::default().enabled_validation_features(&enables);
    let mut ci = vk::InstanceCreateInfo::default()
        .application_info(&app)
        .enabled_layer_names(&layers)
        .enabled_extension_names(&exts);
    if validation {
        ci = ci.push_next(&mut features);
    }
    // SAFETY: the create info points at live locals.
    let raw = unsafe { entry.create_instance(&ci, None) }
        .map_err(|e| VkError::NoDevice(format!("vkCreateInstance failed ({e})")))?;
    let mut instance = Instance {
        raw,
        debug: None,
        entry,
    };
    if debug_utils {
        let loader = ash::ext::debug_utils::Instance::new(&instance.entry, &instance.raw);
        let info = vk::DebugUtilsMessengerCreateInfoEXT::default()
            .message_severity(
                vk::DebugUtilsMessageSeverityFlagsEXT::WARNING
                    | vk::DebugUtilsMessageSeverityFlagsEXT::ERROR,
            )
            .message_type(
                vk::DebugUtilsMessageTypeFlagsEXT::GENERAL
                    | vk::DebugUtilsMessageTypeFlagsEXT::VALIDATION
                    | vk::DebugUtilsMessageTypeFlagsEXT::PERFORMANCE,
            )
            .pfn_user_callback(Some(on_validation_message));
        // SAFETY: valid instance with VK_EXT_debug_utils enabled.
        let m = unsafe { loader.create_debug_utils_messenger(&info, None) }
            .what("vkCreateDebugUtilsMessengerEXT")?;
        instance.debug = Some((loader, m));
    }
    Ok(instance)
}

pub(super) fn version_string(v: u32) -> String {
    format!(
        "{}.{}.{}",
        vk::api_version_major(v),
        vk::api_version_minor(v),
        vk::api_version_patch(v)
    )
}

pub(super) fn query_info(
    instance: &ash::Instance,
    pdev: vk::PhysicalDevice,
    index: usize,
) -> DeviceInfo {
    let mut sub = vk::PhysicalDeviceSubgroupProperties::default();
    let mut drv = vk::PhysicalDeviceDriverProperties::default();
    let mut fc = vk::PhysicalDeviceFloatControlsProperties::default();
    let mut props2 = vk::PhysicalDeviceProperties2::default()
        .push_next(&mut sub)
        .push_next(&mut drv)
        .push_next(&mut fc);
    let mut f12 = vk::PhysicalDeviceVulkan12Features::default();
    let mut f13 = vk::PhysicalDeviceVulkan13Features::default();
    // SAFETY: valid physical device from this instance; out-structs live on the stack.
    let props = unsafe { instance.get_physical_device_properties(pdev) };
    unsafe { instance.get_physical_device_properties2(pdev, &mut props2) };
    let api = props.api_version;
    let mut feats2 = vk::PhysicalDeviceFeatures2::default().push_next(&mut f12);
    if api >= vk::API_VERSION_1_3 {
        feats2 = feats2.push_next(&mut f13);
    }
    unsafe { instance.get_physical_device_features2(pdev, &mut feats2) };
    let feats = feats2.features;
    let pipeline_statistics = has_extension(
        instance,
        pdev,
        ash::khr::pipeline_executable_properties::NAME,
    ) && {
        let mut pe = vk::PhysicalDevicePipelineExecutablePropertiesFeaturesKHR::default();
        let mut f2 = vk::PhysicalDeviceFeatures2::default().push_next(&mut pe);
        // SAFETY: as above.
        unsafe { instance.get_physical_device_features2(pdev, &mut f2) };
        pe.pipeline_executable_info == vk::TRUE
    };
    let maximal_reconvergence =
        has_extension(instance, pdev, ash::khr::shader_maximal_reconvergence::NAME)
            && has_extension(
                instance,
                pdev,
                ash::khr::shader_subgroup_uniform_control_flow::NAME,
            )
            && {
                let mut mr = vk::PhysicalDeviceShaderMaximalReconvergenceFeaturesKHR::default();
                let mut ucf =
                    vk::PhysicalDeviceShaderSubgroupUniformControlFlowFeaturesKHR::default();
                let mut f2 = vk::PhysicalDeviceFeatures2::default()
                    .push_next(&mut mr)
                    .push_next(&mut ucf);
                // SAFETY: as above.
                unsafe { instance.get_physical_device_features2(pdev, &mut f2) };
                mr.shader_maximal_reconvergence == vk::TRUE
                    && ucf.shader_subgroup_uniform_control_flow == vk::TRUE
            };
    let limits = props.limits;
    // SAFETY: valid physical device from this instance.
    let mem = unsafe { instance.get_physical_device_memory_properties(pdev) };
    let device_local_bytes = mem.memory_heaps[..mem.memory_heap_count as usize]
        .iter()
        .filter(|h| h.flags.contains(vk::MemoryHeapFlags::DEVICE_LOCAL))
        .map(|h| h.size)
        .max()
        .unwrap_or(0);
    let name = props
        .device_name_as_c_str()
        .map(|c| c.to_string_lossy().into_owned())
        .unwrap_or_default();
    let driver = drv
        .driver_info_as_c_str()
        .map(|c| c.to_string_lossy().into_owned())
        .unwrap_or_default();
    let cooperative_matrices = cooperative_matrices(instance, pdev);
    let cooperative_matrix = !cooperative_matrices.is_empty()
        && f12.vulkan_memory_model == vk::TRUE
        && f12.shader_int8 == vk::TRUE
        && {
            let mut cm = vk::PhysicalDeviceCooperativeMatrixFeaturesKHR::default();
            let mut f2 = vk::PhysicalDeviceFeatures2::default().push_next(&mut cm);
            // SAFETY: as above.
            unsafe { instance.get_physical_device_features2(pdev, &mut f2) };
            cm.cooperative_matrix == vk::TRUE
        };
    DeviceInfo {
        cooperative_matrices,
        cooperative_matrix,
        index,
        name,
        device_type: format!("{:?}", props.device_type),
        api_version: version_string(api),
        driver,
        subgroup_size: sub.subgroup_size,
        subgroup_shuffle: sub
            .supported_operations
            .contains(vk::SubgroupFeatureFlags::SHUFFLE)
            && sub.supported_stages.contains(vk::ShaderStageFlags::COMPUTE),
        subgroup_arithmetic: sub
            .supported_operations
            .contains(vk::SubgroupFeatureFlags::ARITHMETIC)
            && sub.supported_stages.contains(vk::ShaderStageFlags::COMPUTE),
        shader_int64: feats.shader_int64 == vk::TRUE,
        shader_float64: feats.shader_float64 == vk::TRUE,
        denorm_preserve_f64: feats.shader_float64 == vk::TRUE
            && fc.shader_denorm_preserve_float64 == vk::TRUE,
        denorm_preserve_f32: fc.shader_denorm_preserve_float32 == vk::TRUE,
        subgroup_extended_types: f12.shader_subgroup_extended_types == vk::TRUE,
        int64_atomics: feats.shader_int64 == vk::TRUE
            && f12.shader_buffer_int64_atomics == vk::TRUE,
        full_subgroups: api >= vk::API_VERSION_1_3
            && f13.subgroup_size_control == vk::TRUE
            && f13.compute_full_subgroups == vk::TRUE,
        max_storage_buffer_range: limits.max_storage_buffer_range,
        max_storage_buffers: limits
            .max_per_stage_descriptor_storage_buffers
            .min(limits.max_descriptor_set_storage_buffers)
            .min(limits.max_per_stage_resources),
        max_workgroup_count: limits.max_compute_work_group_count,
        max_workgroup_invocations: limits.max_compute_work_group_invocations,
        max_shared_memory: limits.max_compute_shared_memory_size,
        timestamp_period_ns: if limits.timestamp_compute_and_graphics == vk::TRUE {
            limits.timestamp_period
        } else {
            0.0
        },
        pipeline_statistics,
        maximal_reconvergence,
        device_local_bytes,
        api,
    }
}

/// The shapes VK_KHR_cooperative_matrix offers on `pdev` (none without it).
fn cooperative_matrices(
    instance: &ash::Instance,
    pdev: vk::PhysicalDevice,
) -> Vec<CooperativeMatrix> {
    if !has_extension(instance, pdev, ash::khr::cooperative_matrix::NAME) {
        return Vec::new();
    }
    let entry = match load_entry() {
        Ok(e) => e,
        Err(_) => return Vec::new(),
    };
    let ext = ash::khr::cooperative_matrix::Instance::new(&entry, instance);
    let name = |t: vk::ComponentTypeKHR| {
        match t {
            vk::ComponentTypeKHR::FLOAT16 => "f16",
            vk::ComponentTypeKHR::FLOAT32 => "f32",
            vk::ComponentTypeKHR::FLOAT64 => "f64",
            vk::ComponentTypeKHR::SINT8 => "i8",
            vk::ComponentTypeKHR::SINT16 => "i16",
            vk::ComponentTypeKHR::SINT32 => "i32",
            vk::ComponentTypeKHR::SINT64 => "i64",
            vk::ComponentTypeKHR::UINT8 => "u8",
            vk::ComponentTypeKHR::UINT16 => "u16",
            vk::ComponentTypeKHR::UINT32 => "u32",
            vk::ComponentTypeKHR::UINT64 => "u64",
            // VK_KHR_shader_bfloat16's VK_COMPONENT_TYPE_BFLOAT16_KHR (newer than ash's headers).
            t if t.as_raw() == 1000141000 => "bf16",
            other => return format!("{other:?}"),
        }
        .to_string()
    };
    // SAFETY: valid physical device from this instance, which has the extension.
    unsafe { ext.get_physical_device_cooperative_matrix_properties(pdev) }
        .unwrap_or_default()
        .iter()
        .map(|p| CooperativeMatrix {
            m: p.m_size,
            n: p.n_size,
            k: p.k_size,
            a: name(p.a_type),
            b: name(p.b_type),
            c: name(p.c_type),
            result: name(p.result_type),
            saturating: p.saturating_accumulation == vk::TRUE,
            subgroup_scope: p.scope == vk::ScopeKHR::SUBGROUP,
        })
        .collect()
}

pub(super) fn has_extension(
    instance: &ash::Instance,
    pdev: vk::PhysicalDevice,
    name: &std::ffi::CStr,
) -> bool {
    // SAFETY: valid physical device from this instance.
    unsafe { instance.enumerate_device_extension_properties(pdev) }
        .map(|exts| exts.iter().any(|e| e.extension_name_as_c_str() == Ok(name)))
        .unwrap_or(false)
}

/// The process's Vulkan instance, made once and kept until the process exits. The
/// loader unloads the driver when the last instance is destroyed, and NVIDIA's driver
/// (580) could not be loaded again after about 28 such cycles in one process ("Unable
/// to find a Vulkan driver" from the 29th `Session::new`); one instance also makes a
/// second session cheaper to open.
pub(super) fn shared_instance() -> Result<std::sync::Arc<Instance>> {
    static SHARED: std::sync::Mutex<Option<std::sync::Arc<Instance>>> = std::sync::Mutex::new(None);
    let mut shared = SHARED.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(i) = shared.as_ref() {
        return Ok(i.clone());
    }
    let i = std::sync::Arc::new(create_instance(load_entry()?)?);
    *shared = Some(i.clone());
    Ok(i)
}

/// Lists the Vulkan devices of this machine.
pub fn enumerate() -> Result<Vec<DeviceInfo>> {
    let instance = shared_instance()?;
    // SAFETY: the instance lives as long as the process.
    let out = unsafe { instance.enumerate_physical_devices() }
        .map(|ds| {
            ds.iter()
                .enumerate()
                .map(|(i, d)| query_info(&instance, *d, i))
                .collect()
        })
        .what("vkEnumeratePhysicalDevices");
    out
}
