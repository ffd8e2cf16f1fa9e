/**
 * Example requests and answers shown in /docs. They are data, checked
 * against the route schemas by test/edges/rest/openapi.unit.test.ts, so an
 * example cannot drift from what the API accepts and answers.
 */
export const EXAMPLE_PAYMENT_ID = '6f1c2b8e-3d4a-4c5b-9e7f-0a1b2c3d4e5f';
export const EXAMPLE_BUSINESS_ID = '0b6a3c1e-8f2d-4e5a-b7c9-d1e2f3a4b5c6';
export const EXAMPLE_WITHDRAWAL_ID = '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d';

export const examplePaymentRequest = {
  clientPaymentId: 'order-1042',
  businessId: EXAMPLE_BUSINESS_ID,
  locale: 'en-US',
  displayCurrency: 'EUR',
  displayAmount: '49.90',
  redirectUrl: 'https://shop.example/orders/1042',
};

export const examplePayment = {
  paymentId: EXAMPLE_PAYMENT_ID,
  clientPaymentId: 'order-1042',
  businessId: EXAMPLE_BUSINESS_ID,
  locale: 'en-US',
  status: 'NEW',
  rateType: 'FIXED',
  type: 'ONE_TIME',
  url: 'https://pay.example/checkout/q3JtW0d4bXn1c8YvVfA2kQ',
  overpaymentPolicy: 'PROCESS',
  refundFollowUpDepositsForOneTimePayments: false,
  processorType: 'BLOCKCHAIN',
  displayCurrency: 'EUR',
  expectedDisplayAmount: '49.90',
  expectedDisplayDistributedUserServiceFee: '0.00',
  actualDisplayAmount: '0.00',
  actualDisplayDistributedUserServiceFee: '0.00',
  actualDepositAmount: '0',
  actualDepositDistributedUserServiceFee: '0',
  expectedUniformAmount: '49.90',
  actualUniformAmount: '0.00',
  userServiceFeeDistributionPercentage: '0',
  redirectUrl: 'https://shop.example/orders/1042',
  redirectMode: 'PARENT',
  expirationMinutes: 30,
  initiatedBy: 'kk_live_3f9a',
  paymentInitiatedAt: 1767873600,
  deposits: [],
};

export const exampleWithdrawalRequest = {
  clientWithdrawalId: 'payout-77',
  businessId: EXAMPLE_BUSINESS_ID,
  withdrawCurrency: 'USDT',
  network: 'TRX',
  address: 'TNPeeaaFB7K9cmo4uQpcU32zGK8G1NYqeL',
  amount: '250',
};

export const exampleWithdrawal = {
  withdrawalId: EXAMPLE_WITHDRAWAL_ID,
  clientWithdrawalId: 'payout-77',
  businessId: EXAMPLE_BUSINESS_ID,
  status: 'PROCESSING',
  withdrawCurrency: 'USDT',
  network: 'TRX',
  address: 'TNPeeaaFB7K9cmo4uQpcU32zGK8G1NYqeL',
  destinationTag: null,
  displayCurrency: 'EUR',
  expectedDisplayAmount: '230.00',
  estimatedWithdrawAmount: '250',
  settlementCurrency: 'EUR',
  deductedSettlementAmount: '230.92',
  withdrawFee: '1',
  feePayer: 'BUSINESS',
  approvalsRequired: 0,
  approvals: 0,
  riskScore: '0.0',
  addressOwner: { name: 'unknown', category: 'none' },
  sourceRiskEntities: [],
  destinationRiskEntities: [],
  transactionId: null,
  createdAt: 1767873600,
  completedAt: null,
};

export const exampleBalances = {
  balances: [
    { currency: 'EUR', available: '1250.40', pending: '230.92' },
    { currency: 'USDT', available: '80.5', pending: '0' },
  ],
};
