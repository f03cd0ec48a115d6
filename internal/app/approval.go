package app

import (
	"context"
	"time"

	"github.com/nexus-mcp/nexus/internal/access/principal"
	"github.com/nexus-mcp/nexus/internal/chat"
	"github.com/nexus-mcp/nexus/internal/config"
	"github.com/nexus-mcp/nexus/internal/tutor"
)

// toolApproval is the chat's tool approval (issue 24): each user's own
// setting (tn_user_preferences_set toolApproval, kept with the tutor's user
// preferences), else the configuration's default (chat.toolApproval, never
// without one); and how long a call waits for an answer
// (chat.approvalTimeout; 0: the chat's default). The configuration's values
// are read at start: a reload that changes them says a restart is needed.
func toolApproval(conf *config.Config, tut *tutor.Server) (chat.ApprovalFunc, time.Duration) {
	def, timeout := chat.ApproveNever, time.Duration(0)
	if conf != nil && conf.Chat != nil {
		def, timeout = conf.Chat.ToolApproval, conf.Chat.ApprovalTimeout
	}
	return func(ctx context.Context, who principal.Principal) (string, error) {
		mode, err := tut.ToolApproval(ctx, who.ID)
		if err != nil || mode != "" {
			return mode, err
		}
		return def, nil
	}, timeout
}
