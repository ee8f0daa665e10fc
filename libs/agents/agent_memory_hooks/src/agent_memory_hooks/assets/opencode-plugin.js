// agent-memory for OpenCode: records prompts, replies and tool use as agent-memory events.
// Installed by `agent-memory install opencode`; removed by `agent-memory uninstall opencode`.
//
// Each captured item is piped as JSON to `agent-memory hook opencode`, a short-lived process
// that posts it to the gateway (or spools it when the gateway is away). The process is spawned
// and never awaited, so OpenCode does not wait for memory capture.

import { spawn } from "node:child_process"

// Replaced by the installer with the command that runs the hook (a JSON array).
const HOOK_COMMAND = ["agent-memory", "hook", "opencode"]

export const AgentMemoryPlugin = async ({ directory, worktree }) => {
  const toolArgs = new Map() // callID -> args seen in tool.execute.before
  const textParts = new Map() // messageID -> Map(partID -> part)
  const messages = new Map() // messageID -> AssistantMessage info
  const sent = new Set() // assistant messageIDs already forwarded

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
      send({
        event: "chat.message",
        session_id: input?.sessionID ?? output?.message?.sessionID,
        message_id: input?.messageID ?? output?.message?.id,
        message: output?.message,
        parts: output?.parts,
      })
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
        case "session.deleted":
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
