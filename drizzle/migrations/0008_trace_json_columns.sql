ALTER TABLE "tool_executions" ALTER COLUMN "input" SET DATA TYPE json;--> statement-breakpoint
ALTER TABLE "tool_executions" ALTER COLUMN "output" SET DATA TYPE json;--> statement-breakpoint
ALTER TABLE "tool_executions" ALTER COLUMN "error" SET DATA TYPE json;