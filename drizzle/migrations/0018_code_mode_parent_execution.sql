ALTER TABLE "tool_executions" ADD COLUMN "parent_execution_id" uuid;--> statement-breakpoint
ALTER TABLE "tool_refusals" ADD COLUMN "parent_execution_id" uuid;--> statement-breakpoint
CREATE INDEX "tool_executions_project_parent_idx" ON "tool_executions" USING btree ("project_id","parent_execution_id") WHERE "tool_executions"."parent_execution_id" is not null;