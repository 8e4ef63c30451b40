//! The networks shipped in `weights/` and `--net auto`.
//!
//! `auto` picks the network trained for the game, board and rule (`weights/killallgo9-pcn`
//! for 9x9 Killall-Go, `weights/gomoku15-pcn` for 15x15 Gomoku under 4T), or none when
//! there is none for it. The weights directory is `$PCN_WEIGHTS` when
//! set, else `weights/` in the working directory, else the one of the source tree the
//! binary was built in (`target/release/pcn` → `weights/`), else the copy built into the
//! binary ([`BUILTIN`]), so that a binary copied on its own (into a Sabaki or Piskvork
//! set-up, say) still has its default network.

use std::path::PathBuf;

use super::NetGame;
use crate::game::gomoku::Rule;

/// The `--net` value that picks the shipped network.
pub const AUTO: &str = "auto";

/// The prefix of a network path that names a copy built into the binary
/// (`builtin:killallgo9-pcn`); [`crate::nn::model::Model::load`] reads it from memory.
pub const BUILTIN: &str = "builtin:";

/// The networks built into the binary: `weights/<name>` as it was when the binary was built
/// (name, model.safetensors, model.json).
const BUILTIN_NETS: &[(&str, &[u8], &str)] = &[
    (
        "killallgo9-pcn",
        include_bytes!("../../weights/killallgo9-pcn/model.safetensors"),
        include_str!("../../weights/killallgo9-pcn/model.json"),
    ),
    (
        "gomoku15-pcn",
        include_bytes!("../../weights/gomoku15-pcn/model.safetensors"),
        include_str!("../../weights/gomoku15-pcn/model.json"),
    ),
];

/// The two files of a built-in network named by a `builtin:NAME` path, if there is one.
pub fn builtin(path: &str) -> Option<(&'static [u8], &'static str)> {
    let name = path.strip_prefix(BUILTIN)?;
    BUILTIN_NETS
        .iter()
        .find(|(n, _, _)| *n == name)
        .map(|&(_, st, json)| (st, json))
}

/// The shipped network's directory name for a game and board side (and Gomoku rule name),
/// if one is made for it.
pub fn shipped_name(game: NetGame, board_size: usize, rule: &str) -> Option<&'static str> {
    match (game, board_size) {
        (NetGame::KillallGo, 9) => Some("killallgo9-pcn"),
        // Its games were played, and its gate measured, under 4T only: under another rule
        // its proof costs would describe a different game.
        (NetGame::Gomoku, 15) if rule == Rule::FourT.name() => Some("gomoku15-pcn"),
        _ => None,
    }
}

fn weights_dirs() -> Vec<PathBuf> {
    let mut v = Vec::new();
    if let Some(d) = std::env::var_os("PCN_WEIGHTS") {
        v.push(PathBuf::from(d));
    }
    v.push(PathBuf::from("weights"));
    if let Ok(exe) = std::env::current_exe() {
        // target/release/pcn (or target/release/deps/test-binary) → the source tree.
        for up in exe.ancestors().skip(2).take(3) {
            v.push(up.join("weights"));
        }
    }
    v
}

/// Resolves a `--net` value for a game: `auto` (any case) becomes the shipped network's
/// directory when it exists (`None` when there is none for this game or it is not
/// installed), `none` stays `none`, and a path is returned as given.
pub fn resolve(spec: &str, game: NetGame, board_size: usize, rule: &str) -> Option<String> {
    if !spec.trim().eq_ignore_ascii_case(AUTO) {
        return Some(spec.to_string());
    }
    let name = shipped_name(game, board_size, rule)?;
    weights_dirs()
        .into_iter()
        .map(|d| d.join(name))
        .find(|p| p.join("model.safetensors").is_file())
        .map(|p| p.display().to_string())
        .or_else(|| {
            let b = format!("{BUILTIN}{name}");
            builtin(&b).map(|_| b)
        })
}

/// [`resolve`] for a game known by its `Game::name()` (`killallgo-9x9`, `gomoku-4t`, ...)
/// and board: the one place the command line turns `--net auto` into a path.
pub fn resolve_for_game(
    spec: &str,
    game_name: &str,
    width: usize,
    height: usize,
) -> Option<String> {
    if !spec.trim().eq_ignore_ascii_case(AUTO) {
        return Some(spec.to_string());
    }
    if width != height {
        return None;
    }
    if game_name.starts_with("killallgo") {
        resolve(spec, NetGame::KillallGo, width, "")
    } else if let Some(rule) = game_name.strip_prefix("gomoku-") {
        resolve(spec, NetGame::Gomoku, width, rule)
    } else {
        None
    }
}

/// Whether a `--net` value is `auto`.
pub fn is_auto(spec: &str) -> bool {
    spec.trim().eq_ignore_ascii_case(AUTO)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_names() {
        assert_eq!(
            shipped_name(NetGame::KillallGo, 9, ""),
            Some("killallgo9-pcn")
        );
        assert_eq!(shipped_name(NetGame::KillallGo, 7, ""), None);
        assert_eq!(
            shipped_name(NetGame::Gomoku, 15, "4t"),
            Some("gomoku15-pcn")
        );
        assert_eq!(shipped_name(NetGame::Gomoku, 15, "renju"), None);
        assert_eq!(shipped_name(NetGame::Gomoku, 15, "freestyle"), None);
        assert_eq!(shipped_name(NetGame::Gomoku, 20, "4t"), None);
        assert_eq!(
            resolve("none", NetGame::Gomoku, 15, "4t").as_deref(),
            Some("none")
        );
        assert_eq!(
            resolve("some/dir", NetGame::KillallGo, 9, "").as_deref(),
            Some("some/dir")
        );
        assert_eq!(resolve("AUTO", NetGame::KillallGo, 7, ""), None);
        assert_eq!(resolve_for_game("auto", "gomoku-renju", 15, 15), None);
        assert_eq!(resolve_for_game("auto", "go", 9, 9), None);
        assert_eq!(resolve_for_game("x", "go", 9, 9).as_deref(), Some("x"));
        // Whatever is installed, a resolved directory holds a model.
        if let Some(p) = resolve_for_game("auto", "killallgo-9x9", 9, 9) {
            assert!(std::path::Path::new(&p).join("model.safetensors").is_file());
        }
    }
}
