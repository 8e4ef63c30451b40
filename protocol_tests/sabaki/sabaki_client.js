// Real-client test: drives `pcn gtp` with @sabaki/gtp 3.0.0 (the controller, state tracker
// and queue code Sabaki itself uses) exactly as Sabaki does (docs: protocols.md B.2-B.5), and
// checks what a GUI would parse.
//
// Usage: NODE_PATH=.tools/node/node_modules node protocol_tests/sabaki/sabaki_client.js PCN
// Exit codes: 0 all checks passed, 1 a check failed, 3 @sabaki/gtp is not installed.

'use strict'

let gtp
try {
  gtp = require('@sabaki/gtp')
} catch (e) {
  console.log('NOTICE: @sabaki/gtp is not installed (make test installs it under .tools/node)')
  process.exit(3)
}
const {Controller, ControllerStateTracker} = gtp

const exe = process.argv[2] || 'target/release/pcn'
const log = []
const failures = []
const check = (cond, what) => {
  if (!cond) failures.push(what)
}

const c = new Controller(exe, ['gtp', '--game', 'killallgo', '--move-time', '0.3'])
const st = new ControllerStateTracker(c)
const sent = []
c.on('command-sent', ({command, getResponse, subscribe}) => {
  const text = [command.id != null ? command.id : '', command.name, ...command.args]
    .join(' ')
    .trim()
  sent.push(text)
  log.push('>> ' + text)
  subscribe(({line}) => log.push('<< ' + JSON.stringify(line)))
  getResponse().then(
    r => {
      if (r.error) log.push(`   (error response to ${text})`)
    },
    () => {}
  )
})

// Sabaki's analysis.js parser (v0.60), reduced to what it keeps per candidate.
const vertexRe = /^[A-Za-z]\d+$/
function parseAnalysisLine(line, kata) {
  if (!line.startsWith('info ')) return null
  const out = []
  for (const seg of line.split(/\s*info\s+/).slice(1)) {
    const toks = seg.trim().split(/\s+/)
    let k = toks.length
    while (k > 0 && vertexRe.test(toks[k - 1])) k--
    const pv = toks.slice(k)
    if (pv.length === 0) continue
    const kv = toks.slice(0, k - 1) // drops the word `pv`
    const obj = {}
    for (let i = 0; i + 1 < kv.length; i += 2) obj[kv[i]] = kv[i + 1]
    if (obj.move == null || !vertexRe.test(obj.move) || obj.winrate == null) continue
    const wr = kata ? +obj.winrate : +obj.winrate / 100
    out.push({move: obj.move, visits: +obj.visits, winrate: wr, raw: obj.winrate, pv})
  }
  return out
}

async function analysisSession(name, color, interrupt) {
  const lines = []
  const kata = name.startsWith('kata')
  const done = st.queueCommand({name, args: [color, '20']}, ({line}) => lines.push(line))
  await new Promise(r => setTimeout(r, 700))
  // Sabaki's abort: a protocol_version written while the analysis runs.
  const pv = c.sendCommand({name: interrupt})
  const res = await done
  const pvRes = await pv
  check(!res.error, `${name}: response is not an error`)
  check(!pvRes.error && pvRes.content === '2', `${name}: interrupting ${interrupt} answered '2'`)
  const infos = lines.filter(l => l.startsWith('info '))
  check(infos.length >= 1, `${name}: at least one info line in 700 ms (got ${infos.length})`)
  check(lines[lines.length - 1] === '', `${name}: response ended by an empty line`)
  let cands = 0
  for (const l of infos) {
    const segs = l.split('info ').length - 1
    const parsed = parseAnalysisLine(l, kata)
    check(parsed.length === segs, `${name}: every candidate segment parses (${parsed.length}/${segs})`)
    for (const p of parsed) {
      cands++
      check(p.pv[0] === p.move, `${name}: pv starts with the move`)
      check(p.visits >= 0, `${name}: visits`)
      if (kata) check(p.raw.includes('.'), `${name}: kata winrate has a decimal point (${p.raw})`)
      else check(/^\d+$/.test(p.raw), `${name}: lz winrate is an integer (${p.raw})`)
      check(p.winrate >= 0 && p.winrate <= (kata ? 1 : 100), `${name}: winrate in range`)
    }
  }
  check(cands > 0, `${name}: candidates parsed`)
  return infos
}

async function main() {
  c.start()
  // B.2 attach: name, version, protocol_version, list_commands, then the initial commands,
  // all written without waiting.
  const attach = ['name', 'version', 'protocol_version', 'list_commands'].map(name =>
    c.sendCommand({name})
  )
  const init = c.sendCommand({name: 'time_settings', args: ['0', '1', '1']})
  const [name, version, proto, list, ts] = await Promise.all([...attach, init])
  check(name.content === 'pcn', 'name is pcn')
  check(!version.error, 'version answered')
  check(proto.content === '2', 'protocol_version 2')
  const cmds = list.content.split('\n')
  for (const x of ['kata-analyze', 'lz-analyze', 'undo', 'set_free_handicap', 'pcn-solve'])
    check(cmds.includes(x), `list_commands has ${x}`)
  check(!ts.error, 'initial command time_settings accepted')

  const mv = (col, v) => ({name: 'play', args: [col, v]})
  const before = () => sent.length
  const errorsSince = async n => {
    // Every command of the sync must have succeeded; sync() throws otherwise.
    return sent.slice(n)
  }

  // B.3 full replay: komi, boardsize, clear_board and all plays written at once. Killall-Go:
  // Black's four opening stones arrive as setup plays, without White's passes.
  let n0 = before()
  const h1 = [mv('B', 'C7'), mv('B', 'G7'), mv('B', 'C3'), mv('B', 'G3'), mv('W', 'E5'), mv('B', 'D5'), mv('W', 'E4')]
  try {
    await st.sync({komi: 6.5, boardsize: [9, 9], history: h1})
  } catch (e) {
    check(false, 'full-replay sync: ' + e.message)
  }
  let s1 = await errorsSince(n0)
  check(s1.includes('clear_board'), 'full replay starts with clear_board')
  check(s1.filter(x => x.startsWith('play')).length === 7, 'full replay sends 7 plays')

  // B.3 undo path: a sibling node (last move differs) -> undo + play.
  n0 = before()
  const h2 = [...h1.slice(0, 6), mv('W', 'F5')]
  try {
    await st.sync({komi: 6.5, boardsize: [9, 9], history: h2})
  } catch (e) {
    check(false, 'undo-path sync: ' + e.message)
  }
  let s2 = await errorsSince(n0)
  check(s2.includes('undo') && s2.includes('play W F5') && !s2.includes('clear_board'),
    `undo path used (${s2.join(', ')})`)

  // A record with explicit White passes (SGF W[] nodes) -> full replay again.
  n0 = before()
  const h3 = [mv('B', 'C7'), mv('W', 'pass'), mv('B', 'G7'), mv('W', 'pass'), mv('B', 'C3'),
    mv('W', 'pass'), mv('B', 'G3'), mv('W', 'D5'), mv('B', 'E5')]
  try {
    await st.sync({komi: 0, boardsize: [9, 9], history: h3})
  } catch (e) {
    check(false, 'replay with passes: ' + e.message)
  }

  // B.4 genmove (plain), with Sabaki's queued protocol_version right behind it: the move
  // must not be cut short or answered out of order.
  const gm = c.sendCommand({name: 'genmove', args: ['W']})
  const after = c.sendCommand({name: 'protocol_version'})
  const g = await gm
  const a = await after
  check(!g.error && /^([A-HJ-T]\d+|pass)$/i.test(g.content), `genmove answered a vertex (${g.content})`)
  check(a.content === '2', 'queued protocol_version answered after genmove')

  // B.5 analysis: queued like Sabaki, interrupted by protocol_version; then a sync (which
  // the state tracker queues behind it) must still succeed.
  const toMove = 'B'
  const kataInfos = await analysisSession('kata-analyze', toMove, 'protocol_version')
  const lzInfos = await analysisSession('lz-analyze', toMove, 'protocol_version')
  n0 = before()
  try {
    await st.sync({komi: 0, boardsize: [9, 9], history: [...h3, {name: 'play', args: ['W', g.content]}, mv('B', 'F6')]})
  } catch (e) {
    check(false, 'sync after analysis: ' + e.message)
  }

  // A bad command changes nothing and is answered with '?'.
  const bad = await c.sendCommand({name: 'play', args: ['W', 'C7']})
  check(bad.error && bad.content === 'illegal move', 'occupied point -> ? illegal move')

  await c.stop()

  console.log('--- transcript excerpt (list_commands body and long info lines shortened) ---')
  const listed = new Set(cmds.map(x => '<< ' + JSON.stringify(x)))
  const excerpt = log
    .filter(l => !listed.has(l))
    .map(l => (l.length > 160 ? l.slice(0, 160) + ' ..."' : l))
  for (const l of excerpt.slice(0, 120)) console.log(l)
  console.log(`kata-analyze info lines: ${kataInfos.length}, lz-analyze info lines: ${lzInfos.length}`)
  if (failures.length) {
    console.log('FAILED checks:\n  ' + failures.join('\n  '))
    process.exit(1)
  }
  console.log('sabaki real-client test: all checks passed')
  process.exit(0)
}

main().catch(e => {
  console.log('FAILED: ' + (e && e.stack ? e.stack : e))
  process.exit(1)
})
