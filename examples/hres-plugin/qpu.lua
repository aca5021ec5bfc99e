-- The HRES page's qpu example: the pre-run reserves the QPU for the job and
-- hands its nodes a token; the nodes log it. Every function the plugin
-- requires is defined; the optional ones (validate, async pre-run) are not.

function hres_create_context(ctx, layers)
  slurm.log_info("qpu plugin ready for %s with %d layers", ctx.name, #layers)
  return slurm.SUCCESS
end

function hres_destroy_context(ctx)
  return slurm.SUCCESS
end

function hres_maintenance(ctx, layers)
  return slurm.SUCCESS
end

function hres_controller_job_prerun(ctx, job, prep)
  slurm.log_info("reserving %s for JobId=%d", prep.name, job.job_id)
  return slurm.SUCCESS, "token=" .. job.job_id
end

function hres_controller_job_revoke(ctx, job, prep)
  slurm.log_info("releasing %s reserved for JobId=%d", prep.name, job.job_id)
  return slurm.SUCCESS
end

function hres_controller_job_epilog(ctx, job, prep)
  slurm.log_info("JobId=%d is done with %s", job.job_id, prep.name)
  return slurm.SUCCESS
end

function hres_node_job_prolog(prep, job)
  slurm.log_info("JobId=%d payload %s", job.job_id, prep.payload or "")
  return slurm.SUCCESS
end

function hres_node_job_epilog(prep, job)
  return slurm.SUCCESS
end

function hres_node_task_prolog(prep, job, node_tid, global_tid, env)
  return slurm.SUCCESS
end

function hres_node_user_task_prolog(prep, job, node_tid, global_tid, env)
  return slurm.SUCCESS
end

function hres_node_task_epilog(prep, job, node_tid, global_tid, env)
  return slurm.SUCCESS
end
