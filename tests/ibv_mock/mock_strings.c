/* The enum-to-text helpers libibverbs exports. */
#include "mock_ibv.h"

MOCK_EXPORT const char *ibv_wc_status_str(enum ibv_wc_status status)
{
    static const char *const text[] = {
        [IBV_WC_SUCCESS] = "success",
        [IBV_WC_LOC_LEN_ERR] = "local length error",
        [IBV_WC_LOC_QP_OP_ERR] = "local QP operation error",
        [IBV_WC_LOC_EEC_OP_ERR] = "local EEC operation error",
        [IBV_WC_LOC_PROT_ERR] = "local protection error",
        [IBV_WC_WR_FLUSH_ERR] = "work request flushed",
        [IBV_WC_MW_BIND_ERR] = "memory window bind error",
        [IBV_WC_BAD_RESP_ERR] = "bad response",
        [IBV_WC_LOC_ACCESS_ERR] = "local access error",
        [IBV_WC_REM_INV_REQ_ERR] = "remote invalid request",
        [IBV_WC_REM_ACCESS_ERR] = "remote access error",
        [IBV_WC_REM_OP_ERR] = "remote operation error",
        [IBV_WC_RETRY_EXC_ERR] = "retry count exceeded",
        [IBV_WC_RNR_RETRY_EXC_ERR] = "RNR retry count exceeded",
        [IBV_WC_LOC_RDD_VIOL_ERR] = "local RDD violation",
        [IBV_WC_REM_INV_RD_REQ_ERR] = "remote invalid RD request",
        [IBV_WC_REM_ABORT_ERR] = "remote abort",
        [IBV_WC_INV_EECN_ERR] = "invalid EEC number",
        [IBV_WC_INV_EEC_STATE_ERR] = "invalid EEC state",
        [IBV_WC_FATAL_ERR] = "fatal error",
        [IBV_WC_RESP_TIMEOUT_ERR] = "response timeout",
        [IBV_WC_GENERAL_ERR] = "general error",
        [IBV_WC_TM_ERR] = "tag matching error",
        [IBV_WC_TM_RNDV_INCOMPLETE] = "tag matching rendezvous incomplete",
    };
    if ((unsigned)status >= sizeof(text) / sizeof(text[0]) || !text[status])
        return "unknown";
    return text[status];
}

MOCK_EXPORT const char *ibv_event_type_str(enum ibv_event_type event)
{
    static const char *const text[] = {
        [IBV_EVENT_CQ_ERR] = "CQ error",
        [IBV_EVENT_QP_FATAL] = "QP fatal error",
        [IBV_EVENT_QP_REQ_ERR] = "QP request error",
        [IBV_EVENT_QP_ACCESS_ERR] = "QP access error",
        [IBV_EVENT_COMM_EST] = "communication established",
        [IBV_EVENT_SQ_DRAINED] = "SQ drained",
        [IBV_EVENT_PATH_MIG] = "path migrated",
        [IBV_EVENT_PATH_MIG_ERR] = "path migration error",
        [IBV_EVENT_DEVICE_FATAL] = "device fatal error",
        [IBV_EVENT_PORT_ACTIVE] = "port active",
        [IBV_EVENT_PORT_ERR] = "port error",
        [IBV_EVENT_LID_CHANGE] = "LID change",
        [IBV_EVENT_PKEY_CHANGE] = "P_Key change",
        [IBV_EVENT_SM_CHANGE] = "SM change",
        [IBV_EVENT_SRQ_ERR] = "SRQ error",
        [IBV_EVENT_SRQ_LIMIT_REACHED] = "SRQ limit reached",
        [IBV_EVENT_QP_LAST_WQE_REACHED] = "QP last WQE reached",
        [IBV_EVENT_CLIENT_REREGISTER] = "client reregister",
        [IBV_EVENT_GID_CHANGE] = "GID change",
        [IBV_EVENT_WQ_FATAL] = "WQ fatal error",
    };
    if ((unsigned)event >= sizeof(text) / sizeof(text[0]) || !text[event])
        return "unknown";
    return text[event];
}

MOCK_EXPORT const char *ibv_port_state_str(enum ibv_port_state port_state)
{
    static const char *const text[] = {
        [IBV_PORT_NOP] = "PORT_NOP",       [IBV_PORT_DOWN] = "PORT_DOWN",     [IBV_PORT_INIT] = "PORT_INIT",
        [IBV_PORT_ARMED] = "PORT_ARMED",   [IBV_PORT_ACTIVE] = "PORT_ACTIVE", [IBV_PORT_ACTIVE_DEFER] = "PORT_ACTIVE_DEFER",
    };
    if ((unsigned)port_state >= sizeof(text) / sizeof(text[0]))
        return "unknown";
    return text[port_state];
}
