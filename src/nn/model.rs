//! Model files: the neutral weight format (`model.safetensors` + `model.json`).
//!
//! A model directory holds the weights as float32 safetensors (PyTorch names and shapes,
//! BatchNorm running statistics kept separate) and a JSON description. [`Model::load`]
//! reads both, cross-checks them and validates every tensor against the architecture
//! (stem, residual blocks, policy head, AlphaZero or PCN value heads), so that backends can
//! index the weights without further checks. See docs/model-format.md.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use safetensors::{Dtype, SafeTensors};
use serde_json::Value;

use super::{CostLabel, NetGame, NetInfo, NetKind, NnError};

/// The weight-file format this loader understands (safetensors metadata key `format`).
pub const FORMAT_VERSION: &str = "pcn-neutral-v1";

/// Default BatchNorm epsilon (used when model.json does not say).
pub const DEFAULT_BN_EPS: f32 = 1e-5;

/// Guard against absurd sizes in crafted files (before any allocation depends on them).
const MAX_BOARD: usize = 32;
const MAX_PLANES: usize = 256;
const MAX_BINS: usize = 100_000;

/// One float32 tensor, row-major.
#[derive(Clone, Debug, PartialEq)]
pub struct Tensor {
    /// Dimensions (PyTorch order: conv `[out, in, kh, kw]`, linear `[out, in]`).
    pub shape: Vec<usize>,
    /// The values, `shape.iter().product()` of them.
    pub data: Vec<f32>,
}

/// A validated network: metadata plus every weight tensor by name.
#[derive(Clone, Debug)]
pub struct Model {
    /// Game, sizes and head kind.
    pub info: NetInfo,
    /// Residual blocks in the trunk (5 for the PCN models).
    pub blocks: usize,
    /// Channels of the trunk (64 for the PCN models).
    pub filters: usize,
    /// Hidden width of the AlphaZero value head (256; 0 for PCN models).
    pub value_hidden: usize,
    /// BatchNorm epsilon.
    pub bn_eps: f32,
    /// All tensors by name (exactly the expected set).
    pub tensors: BTreeMap<String, Tensor>,
    /// Where the weights came from (for messages).
    pub path: PathBuf,
}

fn bad(path: &Path, reason: impl Into<String>) -> NnError {
    NnError::BadModel {
        path: path.display().to_string(),
        reason: reason.into(),
    }
}

fn read(path: &Path) -> Result<Vec<u8>, NnError> {
    std::fs::read(path).map_err(|source| NnError::Io {
        path: path.display().to_string(),
        source,
    })
}

/// Resolves a model path (directory, `.safetensors` or `.json`) to the two files.
fn model_files(path: &Path) -> Result<(PathBuf, PathBuf), NnError> {
    if path.is_dir() {
        return Ok((path.join("model.safetensors"), path.join("model.json")));
    }
    match path.extension().and_then(|e| e.to_str()) {
        Some("safetensors") => Ok((path.to_path_buf(), path.with_extension("json"))),
        Some("json") => Ok((path.with_extension("safetensors"), path.to_path_buf())),
        _ => {
            if !path.exists() {
                return Err(NnError::Io {
                    path: path.display().to_string(),
                    source: std::io::Error::new(
                        std::io::ErrorKind::NotFound,
                        "no such file or directory",
                    ),
                });
            }
            Err(bad(
                path,
                "expected a model directory, a .safetensors or a .json file",
            ))
        }
    }
}

/// The tensor names and shapes a network of this description must have, in a fixed order.
pub fn expected_tensors(
    info: &NetInfo,
    blocks: usize,
    filters: usize,
    value_hidden: usize,
) -> Vec<(String, Vec<usize>)> {
    let mut v: Vec<(String, Vec<usize>)> = Vec::new();
    let area = info.board_size * info.board_size;
    let mut conv_bn = |conv: &str, bn: &str, out: usize, inp: usize, k: usize| {
        v.push((format!("{conv}.weight"), vec![out, inp, k, k]));
        v.push((format!("{conv}.bias"), vec![out]));
        for s in ["weight", "bias", "running_mean", "running_var"] {
            v.push((format!("{bn}.{s}"), vec![out]));
        }
    };
    conv_bn("conv", "bn", filters, info.planes, 3);
    for r in 1..=blocks {
        conv_bn(
            &format!("res{r}.conv1"),
            &format!("res{r}.bn1"),
            filters,
            filters,
            3,
        );
        conv_bn(
            &format!("res{r}.conv2"),
            &format!("res{r}.bn2"),
            filters,
            filters,
            3,
        );
    }
    conv_bn("policy.conv", "policy.bn", 2, filters, 1);
    match info.kind {
        NetKind::AlphaZero => {
            conv_bn("value.conv", "value.bn", 1, filters, 1);
        }
        NetKind::Pcn { .. } => {
            conv_bn("blackV.conv", "blackV.bn", 2, filters, 1);
            conv_bn("whiteV.conv", "whiteV.bn", 2, filters, 1);
        }
    }
    v.push(("policy.fc.weight".into(), vec![info.actions, 2 * area]));
    v.push(("policy.fc.bias".into(), vec![info.actions]));
    match info.kind {
        NetKind::AlphaZero => {
            v.push(("value.fc1.weight".into(), vec![value_hidden, area]));
            v.push(("value.fc1.bias".into(), vec![value_hidden]));
            v.push(("value.fc2.weight".into(), vec![1, value_hidden]));
            v.push(("value.fc2.bias".into(), vec![1]));
        }
        NetKind::Pcn { bins } => {
            for h in ["blackV", "whiteV"] {
                v.push((format!("{h}.fc.weight"), vec![bins, 2 * area]));
                v.push((format!("{h}.fc.bias"), vec![bins]));
            }
        }
    }
    v
}

fn meta_usize(
    meta: &std::collections::HashMap<String, String>,
    key: &str,
    path: &Path,
) -> Result<usize, NnError> {
    let s = meta
        .get(key)
        .ok_or_else(|| bad(path, format!("safetensors metadata lacks `{key}`")))?;
    s.trim().parse::<usize>().map_err(|_| {
        bad(
            path,
            format!("safetensors metadata `{key}` = {s:?} is not a count"),
        )
    })
}

fn json_usize(v: &Value, key: &str, path: &Path) -> Result<Option<usize>, NnError> {
    match v.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(x) => x
            .as_u64()
            .and_then(|n| usize::try_from(n).ok())
            .map(Some)
            .ok_or_else(|| bad(path, format!("model.json `{key}` is not a count"))),
    }
}

fn parse_game(s: &str, path: &Path) -> Result<NetGame, NnError> {
    match s {
        "gomoku" => Ok(NetGame::Gomoku),
        "killallgo" => Ok(NetGame::KillallGo),
        _ => Err(bad(
            path,
            format!("unknown game {s:?} (expected gomoku or killallgo)"),
        )),
    }
}

impl Model {
    /// Loads a model from a directory (holding `model.safetensors` and `model.json`) or from
    /// either of the two files (the other one is found next to it, same stem).
    /// A `builtin:NAME` path ([`crate::nn::shipped::BUILTIN`]) reads the copy built into
    /// the binary.
    pub fn load(path: impl AsRef<Path>) -> Result<Model, NnError> {
        if let Some((st, json)) = path.as_ref().to_str().and_then(super::shipped::builtin) {
            return Model::from_bytes(st, json, path.as_ref());
        }
        let (st_path, json_path) = model_files(path.as_ref())?;
        let bytes = read(&st_path)?;
        let json = read(&json_path)?;
        let json =
            String::from_utf8(json).map_err(|_| bad(&json_path, "model.json is not UTF-8"))?;
        Model::from_bytes(&bytes, &json, &st_path)
    }

    /// Builds a model from the contents of the two files; `path` only names them in errors.
    pub fn from_bytes(safetensors: &[u8], json: &str, path: &Path) -> Result<Model, NnError> {
        let (_, header) = SafeTensors::read_metadata(safetensors)
            .map_err(|e| bad(path, format!("not a safetensors file: {e}")))?;
        let empty = std::collections::HashMap::new();
        let meta = header.metadata().as_ref().unwrap_or(&empty);
        match meta.get("format") {
            Some(f) if f == FORMAT_VERSION => {}
            Some(f) => {
                return Err(bad(
                    path,
                    format!("format {f:?} is not supported (this build reads {FORMAT_VERSION:?})"),
                ))
            }
            None => {
                return Err(bad(
                    path,
                    format!("safetensors metadata lacks `format` (expected {FORMAT_VERSION:?})"),
                ))
            }
        }
        let js: Value =
            serde_json::from_str(json).map_err(|e| bad(path, format!("model.json: {e}")))?;
        if !js.is_object() {
            return Err(bad(path, "model.json is not a JSON object"));
        }

        // Game, board and kind: from the safetensors metadata, cross-checked with the JSON.
        let game_s = meta
            .get("game")
            .ok_or_else(|| bad(path, "safetensors metadata lacks `game`"))?;
        let game = parse_game(game_s, path)?;
        if let Some(g) = js.get("game").and_then(Value::as_str) {
            if g != game_s {
                return Err(bad(
                    path,
                    format!("model.json game {g:?} != weights game {game_s:?}"),
                ));
            }
        }
        let board_size = meta_usize(meta, "board_size", path)?;
        if board_size == 0 || board_size > MAX_BOARD {
            return Err(bad(
                path,
                format!("board size {board_size} out of range 1..={MAX_BOARD}"),
            ));
        }
        if let Some(n) = json_usize(&js, "board_size", path)? {
            if n != board_size {
                return Err(bad(
                    path,
                    format!("model.json board_size {n} != weights {board_size}"),
                ));
            }
        }
        let planes = meta_usize(meta, "input_planes", path)?;
        if planes == 0 || planes > MAX_PLANES {
            return Err(bad(path, format!("input planes {planes} out of range")));
        }
        if let Some(p) = js
            .get("input")
            .map(|i| json_usize(i, "planes", path))
            .transpose()?
            .flatten()
        {
            if p != planes {
                return Err(bad(
                    path,
                    format!("model.json input.planes {p} != weights {planes}"),
                ));
            }
        }
        let want_planes = match game {
            NetGame::Gomoku => 4,
            NetGame::KillallGo => 18,
        };
        if planes != want_planes {
            return Err(bad(
                path,
                format!("{game_s} models take {want_planes} input planes, not {planes}"),
            ));
        }
        let actions = meta_usize(meta, "actions", path)?;
        let want_actions = board_size * board_size + usize::from(game == NetGame::KillallGo);
        if actions != want_actions {
            return Err(bad(
                path,
                format!("{actions} actions for a {game_s} {board_size}x{board_size} board (expected {want_actions})"),
            ));
        }
        if let Some(a) = js
            .get("actions")
            .map(|i| json_usize(i, "size", path))
            .transpose()?
            .flatten()
        {
            if a != actions {
                return Err(bad(
                    path,
                    format!("model.json actions.size {a} != weights {actions}"),
                ));
            }
        }
        let kind_s = meta
            .get("kind")
            .ok_or_else(|| bad(path, "safetensors metadata lacks `kind`"))?;
        if let Some(k) = js.get("kind").and_then(Value::as_str) {
            if k != kind_s {
                return Err(bad(
                    path,
                    format!("model.json kind {k:?} != weights kind {kind_s:?}"),
                ));
            }
        }
        let kind = match kind_s.as_str() {
            "alphazero" => NetKind::AlphaZero,
            "pcn" => {
                let bins = meta_usize(meta, "value_bins", path)?;
                if !(2..=MAX_BINS).contains(&bins) {
                    return Err(bad(
                        path,
                        format!("PCN value_bins {bins} out of range 2..={MAX_BINS}"),
                    ));
                }
                if let Some(b) = json_usize(&js, "value_bins", path)? {
                    if b != bins {
                        return Err(bad(
                            path,
                            format!("model.json value_bins {b} != weights {bins}"),
                        ));
                    }
                }
                NetKind::Pcn { bins }
            }
            k => {
                return Err(bad(
                    path,
                    format!("unknown kind {k:?} (expected alphazero or pcn)"),
                ))
            }
        };
        let name = js
            .get("name")
            .and_then(Value::as_str)
            .or_else(|| meta.get("model").map(String::as_str))
            .unwrap_or("unnamed")
            .to_string();
        // The cost label decides how a PCN's costs decode into node counts.
        let label = js
            .get("training")
            .and_then(|t| t.get("label"))
            .map(|l| {
                l.as_str()
                    .ok_or_else(|| bad(path, "model.json training.label is not a string"))
            })
            .transpose()?;
        let cost_label = CostLabel::of_model(&name, label).ok_or_else(|| {
            bad(
                path,
                format!("model.json training.label {label:?} (expected \"max\" or \"heur\")"),
            )
        })?;
        let info = NetInfo {
            name,
            game,
            board_size,
            planes,
            actions,
            kind,
            cost_label,
        };

        // Architecture sizes: the JSON's trunk section, else read off the tensors.
        let st = SafeTensors::deserialize(safetensors)
            .map_err(|e| bad(path, format!("not a safetensors file: {e}")))?;
        let trunk = js.get("trunk").cloned().unwrap_or(Value::Null);
        let filters = match json_usize(&trunk, "filters", path)? {
            Some(f) => f,
            None => st
                .tensor("conv.weight")
                .map_err(|_| bad(path, "missing tensor conv.weight"))?
                .shape()
                .first()
                .copied()
                .unwrap_or(0),
        };
        let blocks = match json_usize(&trunk, "blocks", path)? {
            Some(b) => b,
            None => (1..)
                .take_while(|r| st.tensor(&format!("res{r}.conv1.weight")).is_ok())
                .count(),
        };
        if filters == 0 || filters > 4096 || blocks > 256 {
            return Err(bad(
                path,
                format!("unsupported trunk: {blocks} blocks of {filters} filters"),
            ));
        }
        let bn_eps = match trunk.get("bn_eps") {
            None | Some(Value::Null) => DEFAULT_BN_EPS,
            Some(v) => match v.as_f64() {
                Some(e) if e.is_finite() && e >= 0.0 => e as f32,
                _ => {
                    return Err(bad(
                        path,
                        "model.json trunk.bn_eps is not a non-negative number",
                    ))
                }
            },
        };
        let value_hidden = match kind {
            NetKind::Pcn { .. } => 0,
            NetKind::AlphaZero => match st.tensor("value.fc1.weight") {
                Ok(t) if t.shape().len() == 2 && t.shape()[0] > 0 && t.shape()[0] <= 65536 => {
                    t.shape()[0]
                }
                Ok(t) => {
                    return Err(bad(
                        path,
                        format!("tensor value.fc1.weight has shape {:?}", t.shape()),
                    ))
                }
                Err(_) => return Err(bad(path, "missing tensor value.fc1.weight")),
            },
        };

        let expected = expected_tensors(&info, blocks, filters, value_hidden);
        let mut tensors = BTreeMap::new();
        for (tname, shape) in &expected {
            let view = st.tensor(tname).map_err(|_| {
                bad(
                    path,
                    format!("missing tensor {tname} (expected shape {shape:?})"),
                )
            })?;
            if view.dtype() != Dtype::F32 {
                return Err(bad(
                    path,
                    format!("tensor {tname} is {:?}, expected F32", view.dtype()),
                ));
            }
            if view.shape() != shape.as_slice() {
                return Err(bad(
                    path,
                    format!(
                        "tensor {tname} has shape {:?}, expected {shape:?}",
                        view.shape()
                    ),
                ));
            }
            let data: Vec<f32> = view
                .data()
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect();
            if let Some(i) = data.iter().position(|x| !x.is_finite()) {
                return Err(bad(
                    path,
                    format!("tensor {tname} has a non-finite value at index {i}"),
                ));
            }
            if tname.ends_with("running_var") && data.iter().any(|&v| v + bn_eps <= 0.0) {
                return Err(bad(path, format!("tensor {tname} has a variance <= -eps")));
            }
            tensors.insert(
                tname.clone(),
                Tensor {
                    shape: shape.clone(),
                    data,
                },
            );
        }
        if st.len() != expected.len() {
            let extra: Vec<&str> = st
                .names()
                .into_iter()
                .filter(|n| !tensors.contains_key(*n))
                .collect();
            return Err(bad(path, format!("unexpected tensors {extra:?}")));
        }
        Ok(Model {
            info,
            blocks,
            filters,
            value_hidden,
            bn_eps,
            tensors,
            path: path.to_path_buf(),
        })
    }

    /// The tensor `name` (every expected tensor is present after a successful load).
    pub fn tensor(&self, name: &str) -> Result<&Tensor, NnError> {
        self.tensors
            .get(name)
            .ok_or_else(|| bad(&self.path, format!("missing tensor {name}")))
    }

    /// Checks that the model is for `game` on a `board_size` board (a clear
    /// [`NnError::Mismatch`] otherwise).
    pub fn expect(&self, game: NetGame, board_size: usize) -> Result<(), NnError> {
        if self.info.game != game {
            return Err(NnError::Mismatch(format!(
                "model {} is for {:?}, not {:?}",
                self.info.name, self.info.game, game
            )));
        }
        if self.info.board_size != board_size {
            return Err(NnError::Mismatch(format!(
                "model {} is for a {}x{} board, not {}x{}",
                self.info.name, self.info.board_size, self.info.board_size, board_size, board_size
            )));
        }
        Ok(())
    }
}
