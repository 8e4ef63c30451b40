//! Model loading: every kind of bad model file gives a clear error (never a panic), and a
//! small crafted model loads from a directory or either file.

use std::collections::HashMap;
use std::path::Path;

use pcn::nn::model::{expected_tensors, Model, FORMAT_VERSION};
use pcn::nn::{CostLabel, NetGame, NetInfo, NetKind, NnError};
use safetensors::tensor::TensorView;
use safetensors::Dtype;

/// A tiny Gomoku 5x5 AlphaZero net description: 1 block of 8 filters, value hidden 4.
fn tiny_info() -> NetInfo {
    NetInfo {
        name: "tiny".into(),
        game: NetGame::Gomoku,
        board_size: 5,
        planes: 4,
        actions: 25,
        kind: NetKind::AlphaZero,
        cost_label: CostLabel::Max,
    }
}

struct Craft {
    tensors: Vec<(String, Vec<usize>, Vec<u8>, Dtype)>,
    meta: HashMap<String, String>,
    json: String,
}

fn craft() -> Craft {
    let info = tiny_info();
    let mut tensors = Vec::new();
    for (i, (name, shape)) in expected_tensors(&info, 1, 8, 4).into_iter().enumerate() {
        let n: usize = shape.iter().product();
        let data: Vec<u8> = (0..n)
            .flat_map(|k| {
                // Variances must be positive; other values small and varied.
                let v = if name.ends_with("running_var") {
                    1.0
                } else {
                    ((k * 7 + i) % 13) as f32 * 0.01
                };
                v.to_le_bytes()
            })
            .collect();
        tensors.push((name, shape, data, Dtype::F32));
    }
    let meta: HashMap<String, String> = [
        ("format", FORMAT_VERSION),
        ("game", "gomoku"),
        ("kind", "alphazero"),
        ("board_size", "5"),
        ("input_planes", "4"),
        ("actions", "25"),
        ("value_bins", "0"),
        ("model", "tiny"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let json = r#"{"name": "tiny", "game": "gomoku", "board_size": 5, "kind": "alphazero",
        "input": {"planes": 4}, "actions": {"size": 25},
        "trunk": {"blocks": 1, "filters": 8, "bn_eps": 1e-5}}"#
        .to_string();
    Craft {
        tensors,
        meta,
        json,
    }
}

fn write(c: &Craft, dir: &Path) {
    let views: Vec<(String, TensorView)> = c
        .tensors
        .iter()
        .map(|(n, s, d, t)| (n.clone(), TensorView::new(*t, s.clone(), d).expect("view")))
        .collect();
    let bytes = safetensors::serialize(views, Some(c.meta.clone())).expect("serialize");
    std::fs::write(dir.join("model.safetensors"), bytes).expect("write");
    std::fs::write(dir.join("model.json"), &c.json).expect("write");
}

fn load_err(c: &Craft) -> String {
    let dir = tempfile::tempdir().expect("tempdir");
    write(c, dir.path());
    match Model::load(dir.path()) {
        Ok(_) => panic!("a bad model loaded"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn good_model_loads_from_dir_or_either_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    write(&craft(), dir.path());
    for p in [
        dir.path().to_path_buf(),
        dir.path().join("model.safetensors"),
        dir.path().join("model.json"),
    ] {
        let m = Model::load(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        assert_eq!(m.info, tiny_info());
        assert_eq!((m.blocks, m.filters, m.value_hidden), (1, 8, 4));
        assert!(m.expect(NetGame::Gomoku, 5).is_ok());
        assert!(matches!(
            m.expect(NetGame::KillallGo, 5),
            Err(NnError::Mismatch(_))
        ));
        assert!(matches!(
            m.expect(NetGame::Gomoku, 15),
            Err(NnError::Mismatch(_))
        ));
    }
}

#[test]
fn wrong_or_missing_format_version() {
    let mut c = craft();
    c.meta.insert("format".into(), "pcn-neutral-v0".into());
    assert!(load_err(&c).contains("pcn-neutral-v0"));
    c.meta.remove("format");
    assert!(load_err(&c).contains("format"));
}

#[test]
fn wrong_game_size_planes_or_kind() {
    let mut c = craft();
    c.meta.insert("game".into(), "chess".into());
    assert!(load_err(&c).contains("chess"));

    let mut c = craft();
    c.meta.insert("input_planes".into(), "18".into());
    assert!(load_err(&c).contains("planes"));

    let mut c = craft();
    c.meta.insert("actions".into(), "26".into());
    assert!(load_err(&c).contains("actions"));

    let mut c = craft();
    c.meta.insert("board_size".into(), "x".into());
    assert!(load_err(&c).contains("board_size"));

    let mut c = craft();
    c.meta.insert("board_size".into(), "7".into());
    let e = load_err(&c);
    assert!(e.contains("actions") || e.contains("board"), "{e}");

    let mut c = craft();
    c.meta.insert("kind".into(), "magic".into());
    assert!(load_err(&c).contains("magic"));

    let mut c = craft();
    c.json = c.json.replace("\"gomoku\"", "\"killallgo\"");
    assert!(load_err(&c).contains("game"));

    let mut c = craft();
    c.json = c.json.replace("\"board_size\": 5", "\"board_size\": 9");
    assert!(load_err(&c).contains("board_size"));
}

#[test]
fn missing_extra_misshapen_or_bad_tensors() {
    let mut c = craft();
    c.tensors.retain(|t| t.0 != "res1.bn2.running_mean");
    assert!(load_err(&c).contains("res1.bn2.running_mean"));

    let mut c = craft();
    let t = c
        .tensors
        .iter_mut()
        .find(|t| t.0 == "policy.fc.weight")
        .expect("tensor");
    t.1 = vec![50, 25];
    assert!(load_err(&c).contains("policy.fc.weight"));

    let mut c = craft();
    let t = c
        .tensors
        .iter_mut()
        .find(|t| t.0 == "conv.bias")
        .expect("tensor");
    t.2[0..4].copy_from_slice(&f32::NAN.to_le_bytes());
    assert!(load_err(&c).contains("non-finite"));

    let mut c = craft();
    let t = c
        .tensors
        .iter_mut()
        .find(|t| t.0 == "conv.bias")
        .expect("tensor");
    t.3 = Dtype::I32;
    assert!(load_err(&c).contains("conv.bias"));

    let mut c = craft();
    c.tensors
        .push(("surprise".into(), vec![1], vec![0, 0, 0, 0], Dtype::F32));
    assert!(load_err(&c).contains("surprise"));

    // The JSON says two blocks but the file holds one.
    let mut c = craft();
    c.json = c.json.replace("\"blocks\": 1", "\"blocks\": 2");
    assert!(load_err(&c).contains("res2"));
}

#[test]
fn unreadable_or_garbage_files() {
    let dir = tempfile::tempdir().expect("tempdir");
    assert!(matches!(
        Model::load(dir.path().join("nope")),
        Err(NnError::Io { .. })
    ));
    assert!(matches!(Model::load(dir.path()), Err(NnError::Io { .. })));
    std::fs::write(
        dir.path().join("model.safetensors"),
        b"not a safetensors file at all",
    )
    .expect("write");
    std::fs::write(dir.path().join("model.json"), b"{}").expect("write");
    assert!(matches!(
        Model::load(dir.path()),
        Err(NnError::BadModel { .. })
    ));
    // Valid weights, broken JSON.
    write(&craft(), dir.path());
    std::fs::write(dir.path().join("model.json"), b"{ nope").expect("write");
    assert!(matches!(
        Model::load(dir.path()),
        Err(NnError::BadModel { .. })
    ));
    // Truncated weights.
    write(&craft(), dir.path());
    let b = std::fs::read(dir.path().join("model.safetensors")).expect("read");
    std::fs::write(dir.path().join("model.safetensors"), &b[..b.len() / 2]).expect("write");
    assert!(matches!(
        Model::load(dir.path()),
        Err(NnError::BadModel { .. })
    ));
}

#[test]
fn shared_models_load() {
    let d = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/pcn/models");
    if !d.is_dir() {
        eprintln!(
            "NOTICE: {} absent: shared model loading skipped",
            d.display()
        );
        return;
    }
    for name in ["go_AZ", "go_W-max", "gomoku_AZ"] {
        let m = Model::load(d.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(m.info.name, name);
        assert_eq!((m.blocks, m.filters), (5, 64));
        // The README's counts include the BN running statistics.
        let params: usize = m.tensors.values().map(|t| t.data.len()).sum();
        let want = match name {
            "go_AZ" => 417_350,
            "go_W-max" => 559_308,
            _ => 534_259,
        };
        assert_eq!(params, want, "{name} parameter count");
    }
    // Wrong game for a caller that wants Gomoku 15x15.
    let m = Model::load(d.join("go_AZ")).expect("load");
    assert!(matches!(
        m.expect(NetGame::Gomoku, 15),
        Err(NnError::Mismatch(_))
    ));
}

/// The cost label comes from model.json's `training.label`, else from the name; an unknown
/// label is a load error, not a silent b_max.
#[test]
fn cost_label_from_training_entry_or_name() {
    let with_json = |name: &str, training: &str| {
        let mut c = craft();
        c.json = format!(
            r#"{{"name": "{name}", "game": "gomoku", "board_size": 5, "kind": "alphazero",
            "input": {{"planes": 4}}, "actions": {{"size": 25}},
            "trunk": {{"blocks": 1, "filters": 8, "bn_eps": 1e-5}}{training}}}"#
        );
        c
    };
    let load = |c: &Craft| {
        let dir = tempfile::tempdir().expect("tempdir");
        write(c, dir.path());
        Model::load(dir.path()).map(|m| m.info.cost_label)
    };
    let heur = r#", "training": {"label": "heur"}"#;
    let max = r#", "training": {"label": "max"}"#;
    assert_eq!(load(&with_json("tiny", heur)).ok(), Some(CostLabel::Heur));
    assert_eq!(
        load(&with_json("tiny-heur", max)).ok(),
        Some(CostLabel::Max)
    );
    assert_eq!(
        load(&with_json("go_W-heur", "")).ok(),
        Some(CostLabel::Heur)
    );
    assert_eq!(load(&with_json("tiny", "")).ok(), Some(CostLabel::Max));
    let bad = with_json("tiny", r#", "training": {"label": "average"}"#);
    assert!(
        load_err(&bad).contains("training.label"),
        "{}",
        load_err(&bad)
    );
    let not_text = with_json("tiny", r#", "training": {"label": 3}"#);
    assert!(load_err(&not_text).contains("training.label"));
}

/// Our shipped networks carry their label: the Gomoku one b_heur, the Killall-Go one b_max.
#[test]
fn shipped_networks_carry_their_cost_label() {
    let w = Path::new(env!("CARGO_MANIFEST_DIR")).join("weights");
    for (dir, want) in [
        ("gomoku15-pcn", CostLabel::Heur),
        ("killallgo9-pcn", CostLabel::Max),
    ] {
        let m = Model::load(w.join(dir)).unwrap_or_else(|e| panic!("{dir}: {e}"));
        assert_eq!(m.info.cost_label, want, "{dir}");
    }
}
