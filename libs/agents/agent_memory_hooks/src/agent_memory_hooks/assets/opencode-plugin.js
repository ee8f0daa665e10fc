// agent-memory for OpenCode: records prompts, replies and tool use as agent-memory events, and
// gives the model the project's brief and, on each prompt, the memories the prompt needs.
// Installed by `agent-memory install opencode`; removed by `agent-memory uninstall opencode`.
//
// Each captured item is piped as JSON to `agent-memory hook opencode`, a short-lived process
// that posts it to the gateway (or spools it when the gateway is away). The process is spawned
// and never awaited, so OpenCode does not wait for memory capture.
//
// Recall runs the same command with a payload that asks ({"event": "recall.start"} for the
// brief, {"event": "recall.prompt"} for a prompt) and reads what it prints: the JSON the Claude
// Code hooks print, {"hookSpecificOutput": {"additionalContext": ...}}, or nothing. What to give
// is decided there (agent_memory_hooks/recall.py and the query service), once for every runtime;
// this file only places it where OpenCode reads it (plugin API, @opencode-ai/plugin `Hooks`):
// - the brief: `experimental.chat.system.transform`, which OpenCode awaits before each model
//   call with {sessionID, model} and {system: string[]}; the brief is pushed to `system` on
//   every call of the session (the system prompt is not stored, so it is added each time, the
//   same text, fetched once per session and process);
// - a prompt's recall: `chat.message`, which OpenCode awaits with {sessionID, messageID, ...}
//   and {message, parts} before it stores the user message; a text part marked `synthetic`
//   (what OpenCode itself adds to a message, e.g. a file read for an @ mention) is pushed to
//   `parts`, stored with the message and sent to the model with it.
// Never in the agent's way: each wait ends at the hook's own deadline
// (AGENT_MEMORY_RECALL_TIMEOUT_MS, default 600 ms) plus the time a hook process takes to start
// (RECALL_SLACK_MS); past it, or on any failure, nothing is added and OpenCode goes on.
// AGENT_MEMORY_RECALL=off makes the hook answer nothing. Sessions that OpenCode starts for a
// subagent (a `parentID`) are given nothing: their prompt is written by the model, whose own
// session was given the brief and its recall.

import { spawn } from "node:child_process"
import { randomBytes } from "node:crypto"

// Replaced by the installer with the command that runs the hook (a JSON array).
const HOOK_COMMAND = ["agent-memory", "hook", "opencode"]
const DEFAULT_RECALL_TIMEOUT_MS = 600 // recall.py's default for AGENT_MEMORY_RECALL_TIMEOUT_MS
const RECALL_SLACK_MS = 350 // a hook process's start and exit, beyond its own deadline

const recallTimeoutMs = () => {
  const value = Number.parseInt(process.env.AGENT_MEMORY_RECALL_TIMEOUT_MS ?? "", 10)
  return value > 0 ? value : DEFAULT_RECALL_TIMEOUT_MS
}

// What the hook printed: its additionalContext, else "" (nothing, or not the expected JSON).
const contextOf = (stdout) => {
  try {
    const text = JSON.parse(stdout)?.hookSpecificOutput?.additionalContext
    return typeof text === "string" ? text : ""
  } catch {
    return ""
  }
}

// A part id as OpenCode makes them ("prt_" + 6 bytes of time and counter in hex + 14 base62
// characters), later than every part already in the message: parts are read back in id order.
let lastStamp = 0
let stampCounter = 0
const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
const partID = (parts) => {
  const now = Date.now()
  stampCounter = now === lastStamp ? stampCounter + 1 : 0
  lastStamp = now
  const stamp = (BigInt(now) * 4096n + BigInt(stampCounter)).toString(16).padStart(12, "0").slice(-12)
  const random = [...randomBytes(14)].map((b) => BASE62[b % 62]).join("")
  let id = `prt_${stamp}${random}`
  for (const part of parts) {
    if (typeof part?.id === "string" && part.id >= id) id = `${part.id}0`
  }
  return id
}

export const AgentMemoryPlugin = async ({ directory, worktree }) => {
  const toolArgs = new Map() // callID -> args seen in tool.execute.before
  const textParts = new Map() // messageID -> Map(partID -> part)
  const messages = new Map() // messageID -> AssistantMessage info
  const sent = new Set() // assistant messageIDs already forwarded
  const briefs = new Map() // sessionID -> Promise of its brief ("" for none)
  const subagents = new Set() // sessionIDs of sessions with a parentID

  const send = (payload) => {
    try {
      const [command, ...args] = HOOK_COMMAND
      const child = spawn(command, args, { stdio: ["pipe", "ignore", "ignore"] })
      child.on("error", () => {})
      child.stdin.on("error", () => {})
      child.stdin.end(JSON.stringify({ directory, worktree, ts: Date.now(), ...payload }))
      child.unref()
    } catch {
      // memory capture must never break the agent
    }
  }

  // Runs the hook with `payload` and resolves to the text it gives ("" for none), at the latest
  // when the deadline passes; never rejects. A hook still running then ends by its own deadline.
  const ask = (payload) =>
    new Promise((resolve) => {
      let stdout = ""
      let timer
      let done = false
      const finish = (text) => {
        if (done) return
        done = true
        clearTimeout(timer)
        resolve(text)
      }
      try {
        timer = setTimeout(() => finish(""), recallTimeoutMs() + RECALL_SLACK_MS)
        const [command, ...args] = HOOK_COMMAND
        const child = spawn(command, args, { stdio: ["pipe", "pipe", "ignore"] })
        child.on("error", () => finish(""))
        child.on("close", () => finish(contextOf(stdout)))
        child.stdin.on("error", () => {})
        child.stdout.on("error", () => finish(""))
        child.stdout.setEncoding("utf8")
        child.stdout.on("data", (chunk) => {
          stdout += chunk
        })
        child.stdin.end(JSON.stringify({ directory, worktree, cwd: directory, ts: Date.now(), ...payload }))
      } catch {
        finish("")
      }
    })

  // The session's brief, asked once per session (and per OpenCode process: a resumed session
  // gets it again, since OpenCode does not store the system prompt).
  const brief = (sessionID) => {
    if (!briefs.has(sessionID)) briefs.set(sessionID, ask({ event: "recall.start", session_id: sessionID }))
    return briefs.get(sessionID)
  }

  const promptText = (parts) =>
    (Array.isArray(parts) ? parts : [])
      .filter((p) => p?.type === "text" && !p.synthetic && !p.ignored && typeof p.text === "string")
      .map((p) => p.text)
      .join("\n\n")

  const forwardAssistant = (messageID) => {
    const info = messages.get(messageID)
    if (!info || info.role !== "assistant" || sent.has(messageID)) return
    const parts = [...(textParts.get(messageID)?.values() ?? [])]
    const text = parts
      .filter((p) => p.type === "text" && !p.synthetic && !p.ignored && typeof p.text === "string")
      .map((p) => p.text)
      .join("\n\n")
    if (!text.trim()) return
    sent.add(messageID)
    textParts.delete(messageID)
    send({ event: "assistant.message", session_id: info.sessionID, message_id: messageID, message: info, text })
  }

  return {
    "chat.message": async (input, output) => {
      const sessionID = input?.sessionID ?? output?.message?.sessionID
      send({
        event: "chat.message",
        session_id: sessionID,
        message_id: input?.messageID ?? output?.message?.id,
        message: output?.message,
        parts: output?.parts,
      }) // first, so that what recall adds below is never recorded as the person's words
      try {
        const messageID = output?.message?.id ?? input?.messageID
        const prompt = promptText(output?.parts)
        if (!sessionID || !messageID || subagents.has(sessionID) || !prompt.trim()) return
        if (!Array.isArray(output.parts)) return
        // the brief first, as on other runtimes: what it cites is then not recalled again
        const started = Date.now()
        await brief(sessionID)
        if (Date.now() - started >= recallTimeoutMs()) return // a service that slow: not again
        const context = await ask({ event: "recall.prompt", session_id: sessionID, message_id: messageID, prompt })
        if (!context) return
        output.parts.push({
          id: partID(output.parts),
          sessionID,
          messageID,
          type: "text",
          text: context,
          synthetic: true,
          metadata: { "agent-memory": "recall" },
        })
      } catch {
        // recall must never break the agent
      }
    },
    "experimental.chat.system.transform": async (input, output) => {
      try {
        const sessionID = input?.sessionID
        if (!sessionID || subagents.has(sessionID) || !Array.isArray(output?.system)) return
        const text = await brief(sessionID)
        if (text) output.system.push(text)
      } catch {
        // recall must never break the agent
      }
    },
    "tool.execute.before": async (input, output) => {
      if (input?.callID) toolArgs.set(input.callID, output?.args)
    },
    "tool.execute.after": async (input, output) => {
      const args = input?.args ?? toolArgs.get(input?.callID)
      toolArgs.delete(input?.callID)
      send({
        event: "tool.execute.after",
        session_id: input?.sessionID,
        tool: input?.tool,
        call_id: input?.callID,
        args,
        title: output?.title,
        output: output?.output,
        metadata: output?.metadata,
      })
    },
    event: async ({ event }) => {
      const props = event?.properties ?? {}
      switch (event?.type) {
        case "message.part.updated": {
          const part = props.part
          if (part?.type !== "text" || !part.messageID) break
          if (!textParts.has(part.messageID)) textParts.set(part.messageID, new Map())
          textParts.get(part.messageID).set(part.id, part)
          break
        }
        case "message.updated": {
          const info = props.info
          if (!info?.id) break
          if (info.role !== "assistant") {
            textParts.delete(info.id) // user text arrives through chat.message
            break
          }
          messages.set(info.id, info)
          if (info.time?.completed) forwardAssistant(info.id)
          break
        }
        case "session.idle": {
          for (const [id, info] of messages) {
            if (info.sessionID === props.sessionID) {
              forwardAssistant(id)
              messages.delete(id)
            }
          }
          break
        }
        case "session.created":
          if (props.info?.id && props.info.parentID) subagents.add(props.info.id)
          else if (props.info?.id) brief(props.info.id) // asked now, ready by the first model call
          send({ event: event.type, session_id: props.info?.id, info: props.info })
          break
        case "session.deleted":
          briefs.delete(props.info?.id)
          subagents.delete(props.info?.id)
          send({ event: event.type, session_id: props.info?.id, info: props.info })
          break
        case "session.compacted":
          send({ event: event.type, session_id: props.sessionID })
          break
        case "session.error":
          if (props.sessionID) send({ event: event.type, session_id: props.sessionID, error: props.error })
          break
      }
    },
  }
}
