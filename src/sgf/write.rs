//! SGF writer: trees with variations, values escaped so that reading them back gives the same
//! tree.

use super::{GameTree, Node};

/// Escapes a property value: `\` and `]` get a backslash.
pub fn escape(v: &str) -> String {
    let mut out = String::with_capacity(v.len());
    for c in v.chars() {
        if c == '\\' || c == ']' {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

fn write_node(n: &Node, out: &mut String) {
    out.push(';');
    for p in &n.props {
        out.push_str(&p.id);
        for v in &p.values {
            out.push('[');
            out.push_str(&escape(v));
            out.push(']');
        }
    }
}

fn write_tree(t: &GameTree, out: &mut String, depth: usize) {
    out.push('(');
    for (i, n) in t.nodes.iter().enumerate() {
        // One node per line for the root, then moves run on (short lines for long games).
        if i > 0 && i % 10 == 0 {
            out.push('\n');
        }
        write_node(n, out);
    }
    for v in &t.variations {
        out.push('\n');
        for _ in 0..=depth {
            out.push(' ');
        }
        write_tree(v, out, depth + 1);
    }
    out.push(')');
}

/// Writes one game tree.
pub fn write_tree_string(t: &GameTree) -> String {
    let mut out = String::new();
    write_tree(t, &mut out, 0);
    out.push('\n');
    out
}

/// Writes a collection of game trees.
pub fn write_collection(trees: &[GameTree]) -> String {
    trees.iter().map(write_tree_string).collect()
}
