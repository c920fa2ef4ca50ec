CREATE TABLE "tool_refusals" (
	"id" uuid PRIMARY KEY NOT NULL,
	"project_id" uuid NOT NULL,
	"api_key_id" uuid,
	"tool" text NOT NULL,
	"code" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
DROP INDEX "tool_executions_project_created_idx";--> statement-breakpoint
ALTER TABLE "tool_executions" ADD COLUMN "api_key_id" uuid;--> statement-breakpoint
ALTER TABLE "tool_executions" ADD COLUMN "retry_errors" json;--> statement-breakpoint
ALTER TABLE "tool_executions" ADD COLUMN "otel_trace_id" text;--> statement-breakpoint
ALTER TABLE "tool_executions" ADD COLUMN "otel_span_id" text;--> statement-breakpoint
ALTER TABLE "tool_executions" ADD COLUMN "otel_parent_span_id" text;--> statement-breakpoint
ALTER TABLE "tool_refusals" ADD CONSTRAINT "tool_refusals_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "tool_refusals" ADD CONSTRAINT "tool_refusals_api_key_id_api_keys_id_fk" FOREIGN KEY ("api_key_id") REFERENCES "public"."api_keys"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "tool_refusals_project_created_idx" ON "tool_refusals" USING btree ("project_id","created_at");--> statement-breakpoint
CREATE INDEX "tool_refusals_created_idx" ON "tool_refusals" USING btree ("created_at");--> statement-breakpoint
ALTER TABLE "tool_executions" ADD CONSTRAINT "tool_executions_api_key_id_api_keys_id_fk" FOREIGN KEY ("api_key_id") REFERENCES "public"."api_keys"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "tool_executions_project_tool_created_idx" ON "tool_executions" USING btree ("project_id","tool","created_at","id");--> statement-breakpoint
CREATE INDEX "tool_executions_project_failures_idx" ON "tool_executions" USING btree ("project_id","created_at","id") WHERE "tool_executions"."status" = 'error';--> statement-breakpoint
CREATE INDEX "tool_executions_project_otel_trace_idx" ON "tool_executions" USING btree ("project_id","otel_trace_id");--> statement-breakpoint
CREATE INDEX "tool_executions_created_idx" ON "tool_executions" USING btree ("created_at");--> statement-breakpoint
CREATE INDEX "tool_executions_project_created_idx" ON "tool_executions" USING btree ("project_id","created_at","id");