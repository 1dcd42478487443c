/* config_slurm.c - what the config reader knows of a site's slurm.conf
 * beyond drover's own keys: the names of Slurm's parameters it accepts and
 * reports as ignored (global lines, and keys of NodeName= and
 * PartitionName= lines it does not act on), and Slurm's GPU type names
 * ("a100_80g") turned into words the catalog's product-name matcher reads.
 *
 * A key is in these lists only if Slurm documents it (slurm.conf(5)), so a
 * typo in a drover key still is an error rather than a note. */
#include <ctype.h>
#include <string.h>

#include "core/config_priv.h"
#include "drover/util.h"

/* slurm.conf(5) parameters of the whole cluster (lines of one KEY=VALUE). */
static const char *const globals[] = {
    "AccountingStorageBackupHost", "AccountingStorageEnforce", "AccountingStorageExternalHost",
    "AccountingStorageHost", "AccountingStorageLoc", "AccountingStorageParameters",
    "AccountingStoragePass", "AccountingStoragePort", "AccountingStorageTRES",
    "AccountingStorageType", "AccountingStorageUser", "AccountingStoreFlags",
    "AccountingStoreJobComment", "AcctGatherEnergyType", "AcctGatherFilesystemType",
    "AcctGatherInterconnectType", "AcctGatherNodeFreq", "AcctGatherProfileType",
    "AllowSpecResourcesUsage", "AuthAltParameters", "AuthAltTypes", "AuthInfo", "AuthType",
    "BackupAddr", "BackupController", "BatchStartTimeout", "BcastExclude", "BcastParameters",
    "BurstBufferType", "CheckpointType", "CliFilterPlugins", "ClusterName",
    "CommunicationParameters", "CompleteWait", "ControlAddr", "ControlMachine", "CoreSpecPlugin",
    "CpuFreqDef", "CpuFreqGovernors", "CredType", "DebugFlags", "DefCpuPerGPU", "DefMemPerCPU",
    "DefMemPerGPU", "DefMemPerNode", "DependencyParameters", "DisableRootJobs", "EioTimeout",
    "EnforcePartLimits", "Epilog", "EpilogMsgTime", "EpilogSlurmctld", "ExtSensorsFreq",
    "ExtSensorsType", "FairShareDampeningFactor", "FastSchedule", "FederationParameters",
    "FirstJobId", "GetEnvTimeout", "GpuFreqDef", "GresTypes", "GroupUpdateForce", "GroupUpdateTime",
    "HashPlugin", "HealthCheckInterval", "HealthCheckNodeState", "HealthCheckProgram",
    "InactiveLimit", "InteractiveStepOptions", "JobAcctGatherFrequency", "JobAcctGatherParams",
    "JobAcctGatherType", "JobCompHost", "JobCompLoc", "JobCompParams", "JobCompPass", "JobCompPort",
    "JobCompType", "JobCompUser", "JobContainerType", "JobCredentialPrivateKey",
    "JobCredentialPublicCertificate", "JobFileAppend", "JobRequeue", "JobSubmitPlugins",
    "KeepAliveTime", "KillOnBadExit", "KillWait", "LaunchParameters", "LaunchType", "Licenses",
    "LogTimeFormat", "MailDomain", "MailProg", "MaxArraySize", "MaxBatchRequeue", "MaxDBDMsgs",
    "MaxJobCount", "MaxJobId", "MaxMemPerCPU", "MaxMemPerNode", "MaxNodeCount", "MaxStepCount",
    "MaxTasksPerNode", "MCSParameters", "MCSPlugin", "MessageTimeout", "MinJobAge", "MpiDefault",
    "MpiParams", "NodeFeaturesPlugins", "OverTimeLimit", "PluginDir", "PlugStackConfig",
    "PowerParameters", "PowerPlugin", "PreemptExemptTime", "PreemptMode", "PreemptParameters",
    "PreemptType", "PrEpParameters", "PrEpPlugins", "PriorityCalcPeriod", "PriorityDecayHalfLife",
    "PriorityFavorSmall", "PriorityFlags", "PriorityMaxAge", "PriorityParameters",
    "PrioritySiteFactorParameters", "PrioritySiteFactorPlugin", "PriorityType",
    "PriorityUsageResetPeriod", "PriorityWeightAge", "PriorityWeightAssoc",
    "PriorityWeightFairshare", "PriorityWeightJobSize", "PriorityWeightPartition",
    "PriorityWeightQOS", "PriorityWeightTRES", "PrivateData", "ProctrackType", "Prolog",
    "PrologEpilogTimeout", "PrologFlags", "PrologSlurmctld", "PropagatePrioProcess",
    "PropagateResourceLimits", "PropagateResourceLimitsExcept", "RebootProgram", "ReconfigFlags",
    "RequeueExit", "RequeueExitHold", "ResumeFailProgram", "ResumeProgram", "ResumeRate",
    "ResumeTimeout", "ResvEpilog", "ResvOverRun", "ResvProlog", "ReturnToService", "RoutePlugin",
    "SallocDefaultCommand", "SchedulerParameters", "SchedulerTimeSlice", "SchedulerType",
    "ScronParameters", "SelectType", "SelectTypeParameters", "SlurmctldAddr", "SlurmctldDebug",
    "SlurmctldHost", "SlurmctldLogFile", "SlurmctldParameters", "SlurmctldPidFile",
    "SlurmctldPlugstack", "SlurmctldPort", "SlurmctldPrimaryOffProg", "SlurmctldPrimaryOnProg",
    "SlurmctldSyslogDebug", "SlurmctldTimeout", "SlurmdDebug", "SlurmdLogFile", "SlurmdParameters",
    "SlurmdPidFile", "SlurmdPort", "SlurmdSpoolDir", "SlurmdSyslogDebug", "SlurmdTimeout",
    "SlurmdUser", "SlurmSchedLogFile", "SlurmSchedLogLevel", "SlurmUser", "SrunEpilog",
    "SrunPortRange", "SrunProlog", "StateSaveLocation", "SuspendExcNodes", "SuspendExcParts",
    "SuspendExcStates", "SuspendProgram", "SuspendRate", "SuspendTime", "SuspendTimeout",
    "SwitchParameters", "SwitchType", "TaskEpilog", "TaskPlugin", "TaskPluginParam", "TaskProlog",
    "TCPTimeout", "TmpFS", "TopologyParam", "TopologyPlugin", "TrackWCKey", "TreeWidth",
    "UnkillableStepProgram", "UnkillableStepTimeout", "UsePAM", "VSizeFactor", "WaitTime",
    "X11Parameters",
    /* lines of their own drover does not read */
    "DownNodes", "FrontendName", "NodeSet", NULL};

/* NodeName= keys drover does not act on (CPUs, RealMemory, Gres, Features,
 * State and the socket layout are read). */
static const char *const node_keys[] = {
    "ActiveFeatures", "BcastAddr",    "CoreSpecCount", "CpuBind",
    "CpuSpecList",    "MemSpecLimit", "NodeAddr",      "NodeHostname",
    "Parameters",     "Port",         "Reason",        "RestrictedCoresPerGPU",
    "TmpDisk",        "Topology",     "Weight",        NULL};

/* PartitionName= keys drover does not act on (Nodes, Default, MaxTime,
 * DefaultTime and State are read). */
static const char *const part_keys[] = {"AllocNodes",
                                        "AllowAccounts",
                                        "AllowGroups",
                                        "AllowQos",
                                        "Alternate",
                                        "CpuBind",
                                        "DefCpuPerGPU",
                                        "DefMemPerCPU",
                                        "DefMemPerGPU",
                                        "DefMemPerNode",
                                        "DenyAccounts",
                                        "DenyQos",
                                        "DisableRootJobs",
                                        "ExclusiveTopo",
                                        "ExclusiveUser",
                                        "GraceTime",
                                        "Hidden",
                                        "LLN",
                                        "MaxCPUsPerNode",
                                        "MaxCPUsPerSocket",
                                        "MaxMemPerCPU",
                                        "MaxMemPerNode",
                                        "MaxNodes",
                                        "MinNodes",
                                        "OverSubscribe",
                                        "OverTimeLimit",
                                        "PowerDownOnIdle",
                                        "PreemptMode",
                                        "PriorityJobFactor",
                                        "PriorityTier",
                                        "QOS",
                                        "ReqResv",
                                        "ResumeTimeout",
                                        "RootOnly",
                                        "SelectTypeParameters",
                                        "Shared",
                                        "SuspendTime",
                                        "SuspendTimeout",
                                        "TRESBillingWeights",
                                        NULL};

static bool in_list(const char *const *l, const char *key)
{
    for (; *l; l++)
        if (dr_streq_ci(*l, key))
            return true;
    return false;
}

bool dr_slurm_global_key(const char *key)
{
    return in_list(globals, key);
}

bool dr_slurm_node_key(const char *key)
{
    return in_list(node_keys, key);
}

bool dr_slurm_part_key(const char *key)
{
    return in_list(part_keys, key);
}

/* "a100_80g" -> "A100 80GB", "h100-sxm5" -> "H100 SXM5": separators become
 * blanks and a "<N>G" word becomes "<N>GB", so dr_gpu_type_from_product
 * reads the memory size. */
void dr_slurm_gpu_words(const char *type, char *out, size_t n)
{
    size_t o = 0;
    for (const char *s = type; *s && o + 3 < n;) {
        if (!isalnum((unsigned char)*s)) {
            out[o++] = ' ';
            s++;
            continue;
        }
        const char *w = s;
        while (isalnum((unsigned char)*s))
            s++;
        size_t len = (size_t)(s - w);
        bool num_g = len >= 2 && (w[len - 1] == 'g' || w[len - 1] == 'G') &&
                     strspn(w, "0123456789") == len - 1;
        for (size_t i = 0; i < len && o + 3 < n; i++)
            out[o++] = (char)toupper((unsigned char)w[i]);
        if (num_g && o + 2 < n)
            out[o++] = 'B';
    }
    out[o] = '\0';
}
