//! Finding the CUDA libraries at run time.
//!
//! cudarc looks libraries up by file name only (`libcublas.so.13`, ...), which finds the
//! system's CUDA but not the `nvidia-*` Python wheels (`site-packages/nvidia/*/lib`), where
//! PyTorch installations keep cuBLAS and NVRTC. So before cudarc's first call the backend
//! loads each library it needs **by full path** from the folders below, globally: the
//! dynamic loader then answers cudarc's later by-name look-up with the library already
//! loaded (it matches the file's SONAME). A library found in none of the folders is left
//! to cudarc's own by-name search (the system's loader path).
//!
//! Folders searched, in order:
//! 1. `PCN_CUDA_LIB_DIR` ([`LIB_DIR_ENV`]), a `:`-separated list of folders;
//! 2. `$CUDA_HOME`, `$CUDA_PATH`, `$CUDA_ROOT` (their `lib64` and `lib`), `/usr/local/cuda/lib64`;
//! 3. the `nvidia/*/lib` folders of the Python environments found under `$VIRTUAL_ENV`,
//!    `$CONDA_PREFIX`, `$PYTHONPATH`, `~/.local/lib`, `/usr/lib`, `/usr/local/lib` and
//!    `/opt/*/.venv` / `/opt/*` (newest CUDA major version first within a folder).
//!
//! The driver (`libcuda.so.1`) comes with the GPU's kernel driver: it is looked for in the
//! same folders plus `/usr/local/nvidia/lib64` and `/usr/lib/x86_64-linux-gnu`, then by name.

use std::path::{Path, PathBuf};

/// The environment variable naming extra library folders (`:`-separated).
pub const LIB_DIR_ENV: &str = "PCN_CUDA_LIB_DIR";

/// A library the backend needs.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum CudaLib {
    /// The driver API (`libcuda.so.1`), installed with the GPU driver.
    Driver,
    /// NVRTC's built-in headers, loaded by NVRTC itself (`libnvrtc-builtins.so.*`).
    NvrtcBuiltins,
    /// The run-time compiler (`libnvrtc.so.*`).
    Nvrtc,
    /// cuBLAS's matrix-multiply core (`libcublasLt.so.*`), needed by cuBLAS.
    CublasLt,
    /// cuBLAS (`libcublas.so.*`).
    Cublas,
}

impl CudaLib {
    /// Every library, in loading order (dependencies first).
    pub const ALL: [CudaLib; 5] = [
        CudaLib::Driver,
        CudaLib::NvrtcBuiltins,
        CudaLib::Nvrtc,
        CudaLib::CublasLt,
        CudaLib::Cublas,
    ];

    /// The file name without version suffix (`libcublas.so`).
    pub fn stem(self) -> &'static str {
        match self {
            CudaLib::Driver => "libcuda.so",
            CudaLib::NvrtcBuiltins => "libnvrtc-builtins.so",
            CudaLib::Nvrtc => "libnvrtc.so",
            CudaLib::CublasLt => "libcublasLt.so",
            CudaLib::Cublas => "libcublas.so",
        }
    }

    /// The Python wheel that ships it (for messages).
    pub fn wheel(self) -> &'static str {
        match self {
            CudaLib::Driver => "(none: part of the NVIDIA driver)",
            CudaLib::NvrtcBuiltins | CudaLib::Nvrtc => "nvidia-cuda-nvrtc",
            CudaLib::CublasLt | CudaLib::Cublas => "nvidia-cublas",
        }
    }
}

/// The environment that discovery reads (a struct, so tests can give their own).
#[derive(Clone, Debug, Default)]
pub struct Env {
    /// `PCN_CUDA_LIB_DIR`.
    pub lib_dir: Option<String>,
    /// `CUDA_HOME`, `CUDA_PATH`, `CUDA_ROOT` (those set).
    pub cuda_homes: Vec<String>,
    /// `VIRTUAL_ENV`, `CONDA_PREFIX` (those set).
    pub prefixes: Vec<String>,
    /// `PYTHONPATH`.
    pub pythonpath: Option<String>,
    /// `HOME`.
    pub home: Option<String>,
    /// Also look in the usual system folders (off in tests).
    pub system: bool,
}

impl Env {
    /// The process's environment.
    pub fn from_process() -> Env {
        let var = |k: &str| std::env::var(k).ok().filter(|v| !v.trim().is_empty());
        Env {
            lib_dir: var(LIB_DIR_ENV),
            cuda_homes: ["CUDA_HOME", "CUDA_PATH", "CUDA_ROOT"]
                .iter()
                .filter_map(|k| var(k))
                .collect(),
            prefixes: ["VIRTUAL_ENV", "CONDA_PREFIX"]
                .iter()
                .filter_map(|k| var(k))
                .collect(),
            pythonpath: var("PYTHONPATH"),
            home: var("HOME"),
            system: true,
        }
    }
}

fn subdirs(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .map(|e| e.path())
                .filter(|p| p.is_dir())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// The `nvidia/*/lib` folders under one `site-packages`-like folder, newest CUDA first
/// (`cu13` before `cu12`, then the per-library wheels of CUDA 12: `cublas`, ...).
fn wheel_lib_dirs(site: &Path, out: &mut Vec<PathBuf>) {
    let nv = site.join("nvidia");
    let mut subs = subdirs(&nv);
    // `cuNN` folders (one per CUDA major version, newest first), then the rest by name.
    let key = |p: &PathBuf| {
        let name = p
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("")
            .to_string();
        match name.strip_prefix("cu").and_then(|v| v.parse::<u32>().ok()) {
            Some(v) => (0, u32::MAX - v, name),
            None => (1, 0, name),
        }
    };
    subs.sort_by_key(key);
    for s in subs {
        let lib = s.join("lib");
        if lib.is_dir() {
            out.push(lib);
        }
    }
}

/// The `site-packages`/`dist-packages` folders of the Python installations under `lib`
/// (a prefix's `lib` folder: `lib/python3.X/site-packages`).
fn site_dirs(lib: &Path, out: &mut Vec<PathBuf>) {
    for py in subdirs(lib) {
        let name = py.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if !name.starts_with("python3") {
            continue;
        }
        for s in ["site-packages", "dist-packages"] {
            let d = py.join(s);
            if d.is_dir() {
                out.push(d);
            }
        }
    }
}

/// The folders searched for `lib`, in order (see the module documentation). Only existing
/// folders are listed, each once.
pub fn search_dirs(env: &Env, lib: CudaLib) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = Vec::new();
    if let Some(l) = &env.lib_dir {
        dirs.extend(
            l.split(':')
                .filter(|s| !s.trim().is_empty())
                .map(PathBuf::from),
        );
    }
    for h in &env.cuda_homes {
        dirs.push(Path::new(h).join("lib64"));
        dirs.push(Path::new(h).join("lib"));
    }
    if env.system {
        dirs.push(PathBuf::from("/usr/local/cuda/lib64"));
    }
    let mut sites: Vec<PathBuf> = Vec::new();
    for p in &env.prefixes {
        site_dirs(&Path::new(p).join("lib"), &mut sites);
    }
    if let Some(pp) = &env.pythonpath {
        sites.extend(
            pp.split(':')
                .filter(|s| !s.trim().is_empty())
                .map(PathBuf::from),
        );
    }
    if let Some(h) = &env.home {
        site_dirs(&Path::new(h).join(".local/lib"), &mut sites);
    }
    if env.system {
        for root in ["/usr/lib", "/usr/local/lib", "/usr/lib64"] {
            site_dirs(Path::new(root), &mut sites);
        }
        for opt in subdirs(Path::new("/opt")) {
            site_dirs(&opt.join(".venv/lib"), &mut sites);
            site_dirs(&opt.join("lib"), &mut sites);
        }
    }
    for s in &sites {
        wheel_lib_dirs(s, &mut dirs);
    }
    if lib == CudaLib::Driver && env.system {
        for d in [
            "/usr/local/nvidia/lib64",
            "/usr/local/nvidia/lib",
            "/usr/lib/x86_64-linux-gnu",
            "/usr/lib64",
            "/usr/lib/wsl/lib",
        ] {
            dirs.push(PathBuf::from(d));
        }
    }
    let mut seen = std::collections::HashSet::new();
    dirs.retain(|d| d.is_dir() && seen.insert(d.clone()));
    dirs
}

/// The version suffix of `name` as a library of stem `stem` (`libcublas.so.13.0.2` →
/// `[13, 0, 2]`; `libcublas.so` → `[]`), or `None` when `name` is another file.
pub fn version_of(name: &str, stem: &str) -> Option<Vec<u32>> {
    let rest = name.strip_prefix(stem)?;
    if rest.is_empty() {
        return Some(Vec::new());
    }
    let rest = rest.strip_prefix('.')?;
    rest.split('.').map(|p| p.parse::<u32>().ok()).collect()
}

/// The file for `lib` in `dir`: the one with the highest major version (an unversioned
/// name counts lowest: it is often a development link).
pub fn find_in(dir: &Path, lib: CudaLib) -> Option<PathBuf> {
    let rd = std::fs::read_dir(dir).ok()?;
    let mut best: Option<(Vec<u32>, PathBuf)> = None;
    for e in rd.filter_map(|e| e.ok()) {
        let name = e.file_name();
        let Some(name) = name.to_str() else { continue };
        let Some(v) = version_of(name, lib.stem()) else {
            continue;
        };
        if best.as_ref().is_none_or(|(bv, _)| v > *bv) {
            best = Some((v, e.path()));
        }
    }
    best.map(|(_, p)| p)
}

/// Where `lib` would be loaded from: the first folder of [`search_dirs`] holding it.
pub fn locate(env: &Env, lib: CudaLib) -> Option<PathBuf> {
    search_dirs(env, lib).iter().find_map(|d| find_in(d, lib))
}

/// Which libraries were loaded from where (for `--log-level info` and errors).
#[derive(Clone, Debug, Default)]
pub struct Loaded {
    /// `(library, path)` for each library loaded by full path.
    pub by_path: Vec<(CudaLib, PathBuf)>,
    /// Libraries found in none of the folders (left to the loader's search by name).
    pub by_name: Vec<CudaLib>,
}

#[cfg(feature = "cuda")]
mod load {
    use super::*;
    use std::sync::{Mutex, OnceLock};

    /// Libraries loaded by path stay loaded for the process's life (cudarc keeps its own
    /// handles to them, resolved by name).
    static HANDLES: OnceLock<Mutex<Vec<libloading::os::unix::Library>>> = OnceLock::new();

    /// Loads every library of [`CudaLib::ALL`] that [`locate`] finds, by full path and
    /// globally. Failures to load a found file are returned as `(library, path, error)`.
    pub fn preload(env: &Env) -> (Loaded, Vec<(CudaLib, PathBuf, String)>) {
        let mut loaded = Loaded::default();
        let mut errors = Vec::new();
        let handles = HANDLES.get_or_init(|| Mutex::new(Vec::new()));
        for lib in CudaLib::ALL {
            match locate(env, lib) {
                Some(path) => {
                    let flags = libloading::os::unix::RTLD_NOW | libloading::os::unix::RTLD_GLOBAL;
                    // SAFETY: loading a CUDA library runs its initialisers, which have no
                    // preconditions on our side; the handle is kept for the process's life.
                    match unsafe { libloading::os::unix::Library::open(Some(&path), flags) } {
                        Ok(h) => {
                            if let Ok(mut v) = handles.lock() {
                                v.push(h);
                            }
                            loaded.by_path.push((lib, path));
                        }
                        Err(e) => errors.push((lib, path, e.to_string())),
                    }
                }
                None => loaded.by_name.push(lib),
            }
        }
        (loaded, errors)
    }
}

#[cfg(feature = "cuda")]
pub use load::preload;

#[cfg(test)]
mod tests {
    use super::*;

    fn touch(p: &Path) {
        std::fs::write(p, b"").unwrap();
    }

    #[test]
    fn versions_parse() {
        assert_eq!(
            version_of("libcublas.so.13.0.2", "libcublas.so"),
            Some(vec![13, 0, 2])
        );
        assert_eq!(version_of("libcublas.so", "libcublas.so"), Some(vec![]));
        assert_eq!(version_of("libcublasLt.so.13", "libcublas.so"), None);
        assert_eq!(version_of("libnvrtc.alt.so.13", "libnvrtc.so"), None);
        assert_eq!(version_of("libnvrtc.so.13.x", "libnvrtc.so"), None);
        assert_eq!(
            version_of("libnvrtc-builtins.so.13.0", "libnvrtc-builtins.so"),
            Some(vec![13, 0])
        );
    }

    #[test]
    fn finds_the_newest_major_and_skips_other_files() {
        let d = tempfile::tempdir().unwrap();
        for f in [
            "libcublas.so",
            "libcublas.so.12",
            "libcublas.so.13",
            "libcublasLt.so.13",
            "libnvrtc.alt.so.13",
        ] {
            touch(&d.path().join(f));
        }
        assert_eq!(
            find_in(d.path(), CudaLib::Cublas),
            Some(d.path().join("libcublas.so.13"))
        );
        assert_eq!(
            find_in(d.path(), CudaLib::CublasLt),
            Some(d.path().join("libcublasLt.so.13"))
        );
        assert_eq!(find_in(d.path(), CudaLib::Nvrtc), None);
    }

    #[test]
    fn env_folder_comes_first_then_wheels() {
        let root = tempfile::tempdir().unwrap();
        let own = root.path().join("own");
        std::fs::create_dir_all(&own).unwrap();
        touch(&own.join("libnvrtc.so.12"));
        // A virtual environment with a CUDA 13 wheel layout and a CUDA 12 one.
        let site = root.path().join("venv/lib/python3.12/site-packages/nvidia");
        for sub in ["cu13/lib", "cuda_nvrtc/lib", "cublas/lib"] {
            std::fs::create_dir_all(site.join(sub)).unwrap();
        }
        touch(&site.join("cu13/lib/libnvrtc.so.13"));
        touch(&site.join("cublas/lib/libcublas.so.12"));
        let env = Env {
            lib_dir: Some(format!("{}::/no/such/dir", own.display())),
            prefixes: vec![root.path().join("venv").display().to_string()],
            ..Env::default()
        };
        let dirs = search_dirs(&env, CudaLib::Nvrtc);
        assert_eq!(dirs[0], own);
        // cu13 before the CUDA 12 per-library folders; missing folders dropped.
        let names: Vec<String> = dirs[1..]
            .iter()
            .map(|d| {
                d.parent()
                    .unwrap()
                    .file_name()
                    .unwrap()
                    .to_string_lossy()
                    .into_owned()
            })
            .collect();
        assert_eq!(names, ["cu13", "cublas", "cuda_nvrtc"]);
        assert_eq!(
            locate(&env, CudaLib::Nvrtc),
            Some(own.join("libnvrtc.so.12"))
        );
        assert_eq!(
            locate(&env, CudaLib::Cublas),
            Some(site.join("cublas/lib/libcublas.so.12"))
        );
        assert_eq!(locate(&env, CudaLib::Driver), None);
        // Without the environment variable the wheel is found.
        let env2 = Env {
            lib_dir: None,
            ..env
        };
        assert_eq!(
            locate(&env2, CudaLib::Nvrtc),
            Some(site.join("cu13/lib/libnvrtc.so.13"))
        );
    }

    #[test]
    fn pythonpath_entries_are_sites() {
        let root = tempfile::tempdir().unwrap();
        let lib = root.path().join("nvidia/cu13/lib");
        std::fs::create_dir_all(&lib).unwrap();
        touch(&lib.join("libcublasLt.so.13"));
        let env = Env {
            pythonpath: Some(root.path().display().to_string()),
            ..Env::default()
        };
        assert_eq!(
            locate(&env, CudaLib::CublasLt),
            Some(lib.join("libcublasLt.so.13"))
        );
    }
}
